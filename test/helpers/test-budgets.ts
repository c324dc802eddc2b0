/**
 * DynamoDB Local on a loaded test machine can take seconds to answer; the production budget
 * (platform/config.ts) would turn that into spurious 503s. Fault tests set their own short budget.
 */
export const TEST_DB_REQUEST_TIMEOUT_MS = '20000';
