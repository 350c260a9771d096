import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // WEFT_TEST_STORE=postgres: one PostgreSQL server for the run, a database per test app (test/support/app.ts)
    globalSetup: ['test/support/postgresGlobal.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file starts its own app instances on port 0 with temp data dirs, so files are independent.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
