import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // anvil-backed suites spawn their own processes; two cores, so keep parallelism modest
    maxWorkers: 2,
    reporters: ['default'],
    // `npm run coverage` (vitest run --coverage): V8 coverage of src/, no threshold; the summary per
    // file is printed, and coverage/coverage-summary.json holds the figures per folder
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary', 'text', 'json-summary'],
      reportsDirectory: 'coverage',
    },
  },
})
