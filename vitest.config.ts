import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/worker-setup.ts'],
    include: ['test/**/*.test.ts', 'runtime/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Two cores on the reference machine; more workers only fight over them.
    maxWorkers: 2,
  },
});
