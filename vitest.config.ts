import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // anvil-backed suites spawn their own processes; two cores, so keep parallelism modest
    maxWorkers: 2,
    reporters: ['default'],
  },
})
