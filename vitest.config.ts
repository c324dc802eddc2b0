import { defineConfig } from 'vitest/config';

/**
 * Files that mock a module (`vi.mock`) run in a process of their own: a mocked module would stay in
 * the module cache a worker shares between files.
 */
const MOCKS_A_MODULE = ['test/integration/webhook-delivery-pinning.test.ts', 'test/unit/lazy-contract.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/worker-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Two cores on the reference machine; more workers only fight over them.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          // In-process files share a worker's process and module cache: starting a process and loading
          // the platform's modules again for each file costs more than most of these files' tests.
          // worker-setup.ts gives each file the worker's starting environment and settings.
          name: 'in-process',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/security/**/*.test.ts', 'runtime/**/*.test.ts'],
          exclude: MOCKS_A_MODULE,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // Stacks, browsers and synthesized templates: each file in a process of its own.
          name: 'isolated',
          include: ['test/e2e/**/*.test.ts', 'test/infra/**/*.test.ts', ...MOCKS_A_MODULE],
        },
      },
    ],
  },
});
