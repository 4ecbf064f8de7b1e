/**
 * Probe (issue 13, tenth session): what one eth_backrun costs, by phase, in CPU of this thread
 * (/proc/thread-self/schedstat, not wall time: the machine is shared). The engine runs in this
 * process (WORKERS=0) on the embedded devnet; each fixture swap of bench:backrun is answered ROUNDS
 * times after a warm-up, and every simulator call, pool load and the native search is counted and
 * timed: the user call, the backrun probes and the final execution (calls to the executor), the
 * pools' loading (poolsAfter, third-token discovery), the native search (the rest). A second
 * table runs the native search alone on each fixture's last pools (20 times: its CPU, cycles,
 * optimizations, exact quotes, rotations, and evaluations per candidate).
 * `PROBE_ROUNDS=10 PROBE_FIXTURES=large nice -n 10 npx tsx scripts/probe/backrun-phases.ts`
 */
import { readFileSync } from 'node:fs'
import type { Address } from '../../src/chain/types.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices } from '../../src/node/domain.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import * as search from '../../src/backrun/cycle-search.ts'
import { fixtureBackrunRequest, loadFixtureTxs, loadRegistry, lower } from '../../test/support/devnet.ts'

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 10)
const FILTER = process.env.PROBE_FIXTURES ?? 'large'

/** this thread's CPU, ms (the scheduler's count, updated at ticks: read over many requests, not one) */
function threadCpuMs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6
}

const registry = loadRegistry()
const fixtures = loadFixtureTxs().filter((f) => f.expected.status === 1 && f.name !== 'eth-transfer' && f.name.includes(FILTER))
const executor = lower(registry.backrun.executor)

const local = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0' }), { log: { warn: () => {} } })
const engine = local.backrun
const { simulator } = local

type Phase = 'user' | 'probe' | 'other-call' | 'pools' | 'search'
let acc: Record<Phase, number> & { calls: Record<Phase, number>; gas: number; quotes: number; optimized: number; cycles: number; live: number } = fresh()
function fresh() {
  return { user: 0, probe: 0, 'other-call': 0, pools: 0, search: 0, calls: { user: 0, probe: 0, 'other-call': 0, pools: 0, search: 0 }, gas: 0, quotes: 0, optimized: 0, cycles: 0, live: 0 }
}
let depth = 0
/** CPU of fn counted in phase (nested timed calls are not counted twice: only the outermost counts) */
async function timed<T>(phase: Phase, fn: () => Promise<T>): Promise<T> {
  if (depth > 0) return fn()
  depth++
  const t = threadCpuMs()
  try {
    return await fn()
  } finally {
    acc[phase] += threadCpuMs() - t
    acc.calls[phase]++
    depth--
  }
}
const call = simulator.call.bind(simulator)
let inSearchAfter = false
const execs: number[] = []
simulator.call = (async (state, tx) => {
  const t = threadCpuMs()
  const phase: Phase = !inSearchAfter ? 'user' : lower(tx.to ?? '0x') === executor ? 'probe' : 'other-call'
  const r = await timed(phase, () => call(state, tx))
  if (phase === 'probe') {
    acc.gas += Number(r.gasUsed)
    execs.push(Math.round((threadCpuMs() - t) * 100) / 100)
  }
  return r
}) as typeof simulator.call
const e = engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
const poolsAfter = e.poolsAfter.bind(engine)
let lastPools: { pools: unknown[]; moved: Address[] } | undefined
e.poolsAfter = async (...args: unknown[]) => {
  const r = (await timed('pools', () => poolsAfter(...args))) as { pools: unknown[]; moved: Address[] }
  lastPools = r
  return r
}
const searchAfter = e.searchAfter.bind(engine)
e.searchAfter = async (...args: unknown[]) => {
  inSearchAfter = true
  const t = threadCpuMs()
  const before = acc.pools + acc.probe + acc['other-call']
  try {
    return await searchAfter(...args)
  } finally {
    inSearchAfter = false
    // the rest of searchAfter: the native search, valuation, encoding
    acc.search += threadCpuMs() - t - (acc.pools + acc.probe + acc['other-call'] - before)
  }
}
/** the native search alone on the last request's pools, repeated: its counters and CPU */
function searchAlone(): object {
  if (lastPools === undefined) return {}
  const o = (engine as unknown as { options: { weth: Address; baseTokens: Address[] } }).options
  const params = { pools: lastPools.pools as never, movedPools: lastPools.moved, weth: o.weth, baseTokens: o.baseTokens }
  let r = search.searchBackrun(params)
  const t = threadCpuMs()
  for (let i = 0; i < 20; i++) r = search.searchBackrun(params)
  return { budget_exhausted: r.budgetExhausted, search_alone_ms: Math.round(((threadCpuMs() - t) / 20) * 100) / 100, pools: lastPools.pools.length, cycles: r.cycles, live: r.profitableAtMargin, optimized: r.optimized, quotes: r.quoteEvaluations, rotations: r.rotationsTried, candidates: r.candidates.length, methods: r.candidates.map((c) => `${c.method}:${c.quoteEvaluations}`).join(' ') }
}

const rows = []
const searchRows: object[] = []
for (const fx of fixtures) {
  const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: simulator.common })
  const request = fixtureBackrunRequest(fx, bytesToHexString(tx.tx.data), registry)
  acc = fresh()
  const t0 = threadCpuMs()
  const warm = await engine.backrun(request)
  const warmCpu = threadCpuMs() - t0
  const warmAcc = acc
  acc = fresh()
  const t1 = threadCpuMs()
  let found = warm
  for (let i = 0; i < ROUNDS; i++) found = await engine.backrun(request)
  const per = (x: number) => Math.round((x / ROUNDS) * 100) / 100
  rows.push({
    fixture: fx.name,
    found: found !== null,
    warm_cpu_ms: Math.round(warmCpu * 100) / 100,
    warm_pools_ms: Math.round(warmAcc.pools * 100) / 100,
    cpu_ms: per(threadCpuMs() - t1),
    user_ms: per(acc.user),
    pools_ms: per(acc.pools),
    search_ms: per(acc.search),
    probes: acc.calls.probe / ROUNDS,
    probe_ms: per(acc.probe),
    probe_gas: Math.round(acc.gas / Math.max(1, acc.calls.probe)),
    other_calls: acc.calls['other-call'] / ROUNDS,
    other_ms: per(acc['other-call']),
  })
  searchRows.push({ fixture: fx.name, ...searchAlone() })
}
console.table(rows)
console.table(searchRows)
console.log('executor calls, CPU ms each, in order:', execs.join(' '))
await local.close()
