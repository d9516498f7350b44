import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Database-backed suites share one Postgres server; two workers on two cores is the sweet spot.
    pool: 'forks',
    maxWorkers: 2,
  },
});
