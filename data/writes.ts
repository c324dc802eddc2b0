/**
 * What the layers above data/ may know of its writes: a write prepared by a data module
 * (`TransactItem`), several of them committed all or nothing (`transact`, or `transactRetrying`
 * where they contend on one item); how a write failed is in data/failures.ts.
 * Keys, the table and expressions stay inside data/: a caller composes writes that the record
 * family modules built, it never builds one.
 */
export { transact, type TransactItem } from './tenant';
export { transactRetrying } from './transact-retry';
