/**
 * Where a warm quote's time goes on the thread that computes it (issue 12, twelfth session): the
 * bench:quote mix through the quote service in-process (`WORKERS=0`, no answer cache), distinct
 * amounts per pass so nothing is answered twice, with the route search (`routing.route`) and every
 * simulator call (the router's calldata apart from the rest: token checks, balance reads) timed by
 * process CPU around them. Per round: process CPU ms per quote, and the shares of the route
 * search, the router executions and the other simulator calls (process CPU: the loop is sequential on one
 * thread). The rest is the quote
 * service's own work (funding overrides, calldata, the answer). PROBE_ROUNDS (default 5) rounds of
 * PROBE_MIXES (default 20) passes after PROBE_WARMUP (default 10).
 *   nice -n 10 npx tsx scripts/probe/quote-phase-cost.ts
 */
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices } from '../../src/node/domain.ts'
import { QUOTE_MIX } from '../../test/support/quote-mix.ts'

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 5)
const MIXES = Number(process.env.PROBE_MIXES ?? 20)
const WARMUP = Number(process.env.PROBE_WARMUP ?? 10)

const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0' }), { log: { warn: () => {} } })
const router = domain.contracts.router.toLowerCase()
/** process CPU ms since `from` (the loop is sequential on one thread: the wrapped call's CPU, with any GC helper threads') */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from)
  return (d.user + d.system) / 1000
}
const spent = { route: 0, router: 0, routerCalls: 0, otherCalls: 0, other: 0 }
const sim = domain.simulator
const call = sim.call.bind(sim)
sim.call = async (state, request) => {
  const t = process.cpuUsage()
  try {
    return await call(state, request)
  } finally {
    const ms = cpuMs(t)
    if (request.to?.toLowerCase() === router) {
      spent.router += ms
      spent.routerCalls++
    } else {
      spent.other += ms
      spent.otherCalls++
    }
  }
}
const routing = domain.routing
const route = routing.route.bind(routing)
routing.route = async (reader, request) => {
  const t = process.cpuUsage()
  try {
    return await route(reader, request)
  } finally {
    spent.route += cpuMs(t)
  }
}

let n = 0
const pass = async () => {
  n++
  for (const q of QUOTE_MIX) await domain.quote.quote({ ...q, amountIn: q.amountIn + BigInt(n) })
}
for (let i = 0; i < WARMUP; i++) await pass()
for (let r = 0; r < ROUNDS; r++) {
  for (const k of Object.keys(spent) as (keyof typeof spent)[]) spent[k] = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < MIXES; i++) await pass()
  const wall = performance.now() - t0
  const d = process.cpuUsage(cpu0)
  const quotes = MIXES * QUOTE_MIX.length
  const cpu = (d.user + d.system) / 1000
  const pct = (ms: number) => `${((100 * ms) / cpu).toFixed(1)}%`
  console.log(
    `round ${r}: CPU ms per quote ${((d.user + d.system) / 1000 / quotes).toFixed(3)}, wall ms per quote ${(wall / quotes).toFixed(3)}; route search ${pct(spent.route)}, router executions ${pct(spent.router)} (${(spent.routerCalls / quotes).toFixed(2)} a quote, ${(spent.router / spent.routerCalls).toFixed(3)} ms each), other simulator calls ${pct(spent.other)} (${(spent.otherCalls / quotes).toFixed(2)} a quote)`,
  )
}
await domain.close()
