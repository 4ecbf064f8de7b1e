/**
 * Compiles every `src/contracts/*.sol` with the pinned solc npm package and writes one artifact per
 * contract to `src/contracts/artifacts/<Name>.json` (abi, bytecode, deployedBytecode).
 *
 *   npx tsx scripts/compile-contracts.ts           # write the artifacts
 *   npx tsx scripts/compile-contracts.ts --check   # exit 1 when the committed artifacts are stale
 *
 * The artifacts are committed so that `npm start` and the devnet builder need no compiler run.
 * Output is deterministic: the compiler version and settings are pinned, sources are fed in sorted
 * order, the metadata hash is left out of the bytecode (so a comment edit does not change code),
 * and the JSON is written with a fixed layout.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import solc from 'solc'
import { ARTIFACTS_DIR, CONTRACTS_DIR } from './devnet/paths.ts'

/** The solc build the artifacts were made with; a different compiler gives different bytecode. */
export const SOLC_VERSION = '0.8.37+commit.f401782d.Emscripten.clang'

/**
 * Pinned compiler settings. cancun bytecode runs unchanged on the devnet's prague rules and on
 * every current mainnet-like chain; bytecodeHash none keeps the code independent of source text
 * that does not change behaviour.
 */
export const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const

/**
 * Sources compiled through the IR pipeline and optimized for execution, not deployment: the
 * router runs in every quote and every user's swap, and its calldata decoding and call encoding
 * took a third of a bench:quote mix quote's EVM steps (scripts/count-quote-steps.ts, per execution
 * of the mix's router calldata: 8,443 of 24,694 steps with SOLC_SETTINGS, 5,476 of 21,727 with
 * these; 342,004 -> 333,778 gas, the same plans). The other
 * contracts keep SOLC_SETTINGS: their code fixes the devnet's addresses (V4 hooks are mined
 * against their init code, pairs are found by their init-code hash) and the backrun executor's
 * measured gas.
 */
export const VIA_IR_SOURCES: readonly string[] = ['SwapPlanRouter.sol']

export const SOLC_VIA_IR_SETTINGS = {
  ...SOLC_SETTINGS,
  optimizer: { enabled: true, runs: 1_000_000 },
  viaIR: true,
} as const

type SolcSettings = typeof SOLC_SETTINGS | typeof SOLC_VIA_IR_SETTINGS

export interface ContractArtifact {
  contractName: string
  sourceName: string
  compiler: { version: string; settings: Omit<SolcSettings, 'outputSelection'> }
  abi: unknown[]
  bytecode: `0x${string}`
  deployedBytecode: `0x${string}`
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
}

/** Compiles the sources of `contractsDir` and returns the artifacts keyed by contract name. */
export function compileContracts(contractsDir: string = CONTRACTS_DIR): Map<string, ContractArtifact> {
  if (solc.version() !== SOLC_VERSION) {
    throw new Error(`solc ${solc.version()} is installed, the artifacts are pinned to ${SOLC_VERSION}`)
  }
  const files = readdirSync(contractsDir)
    .filter((f) => f.endsWith('.sol'))
    .sort()
  const artifacts = new Map<string, ContractArtifact>()
  // every source with SOLC_SETTINGS, except the contracts of VIA_IR_SOURCES, which come from a second run
  const viaIr = new Set(VIA_IR_SOURCES.filter((f) => files.includes(f)).map((f) => `src/contracts/${f}`))
  for (const [sourceName, artifact] of compileWith(contractsDir, files, SOLC_SETTINGS)) {
    if (!viaIr.has(sourceName)) addArtifact(artifacts, artifact)
  }
  if (viaIr.size > 0) {
    for (const [sourceName, artifact] of compileWith(contractsDir, [...VIA_IR_SOURCES], SOLC_VIA_IR_SETTINGS)) {
      if (viaIr.has(sourceName)) addArtifact(artifacts, artifact)
    }
  }
  return new Map([...artifacts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

function addArtifact(artifacts: Map<string, ContractArtifact>, artifact: ContractArtifact): void {
  if (artifacts.has(artifact.contractName)) {
    throw new Error(`two contracts are named ${artifact.contractName}; artifact names must be unique`)
  }
  artifacts.set(artifact.contractName, artifact)
}

/** One solc run over `files` (and what they import); [source name, artifact] of every contract compiled. */
function compileWith(contractsDir: string, files: readonly string[], settings: SolcSettings): [string, ContractArtifact][] {
  const sources: Record<string, { content: string }> = {}
  for (const f of files) sources[`src/contracts/${f}`] = { content: readFileSync(join(contractsDir, f), 'utf8') }
  const input = { language: 'Solidity', sources, settings }
  // Relative imports between the project's own sources resolve inside src/contracts only.
  const findImports = (path: string) => {
    const file = join(contractsDir, basename(path))
    return existsSync(file) ? { contents: readFileSync(file, 'utf8') } : { error: `import not found: ${path}` }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)
  for (const w of output.errors ?? []) if (w.severity === 'warning') process.stderr.write(w.formattedMessage + '\n')

  const { outputSelection: _ignored, ...recorded } = settings
  const compiled: [string, ContractArtifact][] = []
  for (const sourceName of Object.keys(output.contracts ?? {}).sort()) {
    const contracts = output.contracts![sourceName]!
    for (const contractName of Object.keys(contracts).sort()) {
      const c = contracts[contractName]!
      compiled.push([
        sourceName,
        {
          contractName,
          sourceName,
          compiler: { version: SOLC_VERSION, settings: recorded },
          abi: c.abi,
          bytecode: `0x${c.evm.bytecode.object}`,
          deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        },
      ])
    }
  }
  return compiled
}

/** The exact text an artifact is stored as. */
export function artifactText(artifact: ContractArtifact): string {
  return JSON.stringify(artifact, null, 2) + '\n'
}

/** Names whose committed artifact differs from (or is missing for) the compiled one. */
export function staleArtifacts(artifacts: Map<string, ContractArtifact>, artifactsDir: string = ARTIFACTS_DIR): string[] {
  const stale: string[] = []
  for (const [name, artifact] of artifacts) {
    const file = join(artifactsDir, `${name}.json`)
    if (!existsSync(file) || readFileSync(file, 'utf8') !== artifactText(artifact)) stale.push(name)
  }
  return stale
}

function main() {
  const artifacts = compileContracts()
  if (process.argv.includes('--check')) {
    const stale = staleArtifacts(artifacts)
    if (stale.length > 0) {
      console.error(`stale artifacts (run npx tsx scripts/compile-contracts.ts): ${stale.join(', ')}`)
      process.exit(1)
    }
    console.log(`${artifacts.size} artifacts up to date`)
    return
  }
  mkdirSync(ARTIFACTS_DIR, { recursive: true })
  for (const [name, artifact] of artifacts) writeFileSync(join(ARTIFACTS_DIR, `${name}.json`), artifactText(artifact))
  // Artifacts of contracts that no longer exist are reported, not deleted: they may be someone's work in progress.
  const orphans = readdirSync(ARTIFACTS_DIR).filter((f) => f.endsWith('.json') && !artifacts.has(f.slice(0, -5)))
  if (orphans.length > 0) console.warn(`artifacts without a source: ${orphans.join(', ')}`)
  console.log(`wrote ${artifacts.size} artifacts: ${[...artifacts.keys()].join(', ')}`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main()
