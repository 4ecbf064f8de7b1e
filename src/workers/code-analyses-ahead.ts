/**
 * The jump analyses of the contracts an isolate will run, made before its first request
 * (interpreter-patches.ts analyseCodeAhead). Without this an isolate analyses a contract the first
 * time an execution jumps in it, and under bench:soak the main isolate met the devnet's pools one by
 * one for minutes (its backruns cross a pool only when a submission moves it): ~0.5 MB of analysis
 * per V3 pool content, most of what its live heap gained after the first minute (BENCHMARKS.md,
 * h18-heap). Made at start, that memory is part of the first minute, and the first request through a
 * pool does not pay its analysis.
 *
 * Which contracts (knownCodeAddresses): on the embedded devnet every genesis account with code (the
 * pools, routers, tokens, feed and executor the devnet deploys: ~40 contents); on a fork the
 * service's own contracts (router, backrun executor, WETH, base tokens, feed): the fork's pools are
 * found by the route search as requests come, so they are still analysed when first run. Bounded
 * by the analyses' own bound (SHARED_ANALYSIS_CODE_BYTES per Common), which a long list only cycles.
 */
import type { Common } from '@ethereumjs/common'
import { createEVM } from '@ethereumjs/evm'
import type { ChainContracts } from '../config.ts'
import { DevnetStateSource } from '../chain/memory/devnet-source.ts'
import type { Address, ChainStateSource, StateReader } from '../chain/types.ts'
import { analyseCodeAhead, applyInterpreterPatches, patchEvmInstance } from '../evm/interpreter-patches.ts'
import { removeCommonListeners, withCommonListeners } from '../evm/vm-pool.ts'

/** What analysing ahead did in one isolate: reported by each worker as it warms up. */
export interface CodeAnalysesAhead {
  /** contracts whose code was analysed now (not empty, not analysed already) */
  contracts: number
  /** their code bytes */
  codeBytes: number
  /** wall time of the reads and analyses, ms */
  ms: number
}

/** The addresses whose code every isolate analyses at start (see the module comment), without repeats. */
export function knownCodeAddresses(chain: ChainStateSource, contracts: ChainContracts): Address[] {
  if (chain instanceof DevnetStateSource) {
    return [...chain.genesis.accounts].filter(([, account]) => account.code.length > 0).map(([address]) => address)
  }
  const own = [contracts.router, contracts.backrunExecutor, contracts.weth, ...contracts.baseTokens, contracts.ethUsdFeed]
  return [...new Set(own.map((address) => address.toLowerCase() as Address))]
}

/**
 * Reads the code of `addresses` from `reader` and analyses each for the EVMs of `common`. The
 * analysing EVM is made here as a pooled one is (createEVM on the same Common, the per-EVM patches)
 * and then let go: its Common listener is removed, as the VM pool removes a discarded VM's, so
 * nothing but the opcode table the analyses' lazy stock table reads keeps any of it.
 */
export async function analyseKnownCode(common: Common, reader: StateReader, addresses: readonly Address[]): Promise<CodeAnalysesAhead> {
  const started = performance.now()
  await applyInterpreterPatches()
  const { made: evm, listeners } = await withCommonListeners(common, () => createEVM({ common }))
  removeCommonListeners(common, listeners)
  patchEvmInstance(evm)
  let contracts = 0
  let codeBytes = 0
  for (const address of addresses) {
    const code = await reader.getCode(address)
    if (!analyseCodeAhead(evm, code)) continue
    contracts++
    codeBytes += code.length
  }
  return { contracts, codeBytes, ms: performance.now() - started }
}
