import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'
import { filesBelow, INTEGRATION_TEST_SUFFIXES, isIntegrationTest, needsOwnModules } from './test/support/test-layout.ts'

/**
 * Three projects, one run (`npm test`, the README's and CI's command, runs them all):
 * - `unit`: every test that starts no external process (no anvil, no service process, no
 *   PostgreSQL). They share their worker's modules (`isolate: false`): viem, ethereumjs and the
 *   service's own modules are imported once per worker instead of once per file, which was most
 *   of the suite's import time. A unit test must therefore leave no module-level state behind.
 * - `unit-isolated`: the unit tests that replace a module (`vi.mock`) or test the patches of src/evm
 *   against stock ethereumjs (see needsOwnModules in test/support/test-layout.ts), each with modules
 *   of its own: a replacement must neither miss a module another file loaded first nor leak into
 *   the next, and the stock functions must be captured before any patch applies.
 * - `integration`: the tests that start processes (`*.anvil.test.ts`, `*.e2e.test.ts`; the split is
 *   checked by test/support/test-layout.test.ts), each file isolated.
 * `npm run test:unit` runs the first two, `npm run test:integration` the third.
 */
const integration = INTEGRATION_TEST_SUFFIXES.map((suffix) => `test/**/*${suffix}`)
const ownModules = filesBelow(import.meta.dirname, 'test', '.test.ts').filter(
  (file) => !isIntegrationTest(file) && needsOwnModules(readFileSync(join(import.meta.dirname, file), 'utf8')),
)

export default defineConfig({
  test: {
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
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...integration, ...ownModules], isolate: false } },
      { extends: true, test: { name: 'unit-isolated', include: ownModules.length > 0 ? ownModules : ['no-such-file'] } },
      { extends: true, test: { name: 'integration', include: integration } },
    ],
  },
})
