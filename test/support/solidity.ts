/**
 * Solidity compiled for a test with the pinned solc (the same npm package scripts/compile-contracts.ts
 * uses for our contracts): the test's own helper contracts, written in the test. solc is loaded on
 * the first compilation, not at import: it is the heaviest module the tests load.
 */
import type { Abi } from 'viem'
import type { Hex } from '../../src/chain/types.ts'

export interface CompiledContract {
  abi: Abi
  /** the deployed (runtime) bytecode, to install by a state or code override */
  code: Hex
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: Abi; evm: { deployedBytecode: { object: string } } }>>
}

/**
 * Every contract of `source` (one file named `fileName`), by name: optimizer on (200 runs),
 * evmVersion cancun. Throws solc's messages when it reports an error.
 */
export async function compileSolidity(fileName: string, source: string): Promise<Record<string, CompiledContract>> {
  const { default: solc } = (await import('solc')) as { default: { compile(input: string): string } }
  const input = {
    language: 'Solidity',
    sources: { [fileName]: { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } } },
  }
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  const contracts = out.contracts?.[fileName]
  if (contracts === undefined) throw new Error(`solc compiled nothing from ${fileName}`)
  return Object.fromEntries(Object.entries(contracts).map(([name, c]) => [name, { abi: c.abi, code: `0x${c.evm.deployedBytecode.object}` as Hex }]))
}
