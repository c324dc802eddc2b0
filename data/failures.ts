/**
 * What the layers above data/ may know of how a database call failed: a write that lost a race or
 * broke a rule, a cursor that did not come from us, a table that did not answer in time. The
 * pipeline's error responder turns each into its answer (409, 400, 503).
 */
export { isDatabaseUnavailable } from './client';
export { ConditionFailedError, InvalidCursorError } from './tenant';
