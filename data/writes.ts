/**
 * What the layers above data/ may know of its writes: a write prepared by a data module
 * (`TransactItem`), several of them committed all or nothing (`transact`, or `transactRetrying`
 * where they contend on one item), and the errors of a write that lost a race or broke a rule.
 * Keys, the table and expressions stay inside data/: a caller composes writes that the record
 * family modules built, it never builds one.
 */
export { ConditionFailedError, InvalidCursorError, transact, type TransactItem } from './tenant';
export { transactRetrying } from './transact-retry';
