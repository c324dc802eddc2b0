/** The JWT secret the test worker and the stacks it starts share; a module of its own so scripts outside vitest can read it. */
export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
