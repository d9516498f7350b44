import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end tests run real agents, databases and the bundled action; on a loaded 2-core machine
    // they take minutes, not seconds.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Database-backed suites share one Postgres server; two workers on two cores is the sweet spot.
    pool: 'forks',
    maxWorkers: 2,
  },
});
