/**
 * What the layers above data/ may know of a call that failed because the table could not be
 * reached in time: such a failure is the platform's outage, which the caller may retry later,
 * not a broken rule or a refused credential. The client itself stays inside data/.
 */
export { isDatabaseUnavailable } from './client';
