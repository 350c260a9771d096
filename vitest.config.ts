import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file starts its own app instances on port 0 with temp data dirs, so files are independent.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
