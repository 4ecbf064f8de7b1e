/**
 * node --expose-gc --import tsx scripts/probe/code-analyses-ahead-cost.ts
 *
 * What analysing the embedded devnet's known contracts ahead costs one isolate at start
 * (src/workers/code-analyses-ahead.ts, issue 10): wall and CPU ms of analyseKnownCode on the
 * devnet's genesis, after the interpreter patches are applied (they are at any isolate's first VM),
 * and the live heap it adds (used heap after full GCs, before and after). PROBE_ROUNDS (default 5)
 * fresh Commons in turn, so each round analyses everything again; the first round also pays the
 * compilation of the analysis code. Last line: one JSON object.
 */
import { commonForChain } from '../../src/evm/chain-config.ts'
import { applyInterpreterPatches } from '../../src/evm/interpreter-patches.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { analyseKnownCode, knownCodeAddresses } from '../../src/workers/code-analyses-ahead.ts'
import { loadConfig } from '../../src/node/config.ts'
import { resolveChainContracts } from '../../src/node/chain-contracts.ts'

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 5)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const config = loadConfig({})
const chain = DevnetStateSource.fromGenesisFile(config.devnet.genesisPath)
const addresses = knownCodeAddresses(chain, resolveChainContracts(config))
await applyInterpreterPatches()
const kept: object[] = []
const rounds: Array<{ ms: number; cpuMs: number; contracts: number; codeBytes: number; heapMb: number }> = []
for (let round = 0; round < ROUNDS; round++) {
  const common = commonForChain(chain.chainId, config.chain.hardfork)
  kept.push(common) // the analyses live as long as their Common: keep each round's
  gc()
  const before = process.memoryUsage().heapUsed
  const cpu = process.cpuUsage()
  const ahead = await analyseKnownCode(common, chain.latest(), addresses)
  const used = process.cpuUsage(cpu)
  gc()
  const heapMb = (process.memoryUsage().heapUsed - before) / 2 ** 20
  rounds.push({ ms: ahead.ms, cpuMs: (used.user + used.system) / 1000, contracts: ahead.contracts, codeBytes: ahead.codeBytes, heapMb })
  console.log(`round ${round}: ${ahead.contracts} contracts, ${ahead.codeBytes} code bytes, ${ahead.ms.toFixed(1)} ms wall, ${((used.user + used.system) / 1000).toFixed(1)} CPU ms, +${heapMb.toFixed(2)} MB live heap`)
}
const later = rounds.slice(1)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
console.log(
  JSON.stringify({
    addresses: addresses.length,
    contracts: rounds[0]?.contracts,
    code_bytes: rounds[0]?.codeBytes,
    first_ms: rounds[0]?.ms,
    first_cpu_ms: rounds[0]?.cpuMs,
    later_median_ms: median(later.map((r) => r.ms)),
    later_median_cpu_ms: median(later.map((r) => r.cpuMs)),
    heap_mb_median: median(rounds.map((r) => r.heapMb)),
  }),
)
