/**
 * The route search's share of a quote, every venue against Uniswap's V2 + V3 alone (issue 15,
 * eleventh session): the quote service in-process (`WORKERS=0`, answer cache off) on the devnet,
 * once with every venue of the registry and once with `VENUES` = Uniswap's V2 and V3 entries (as
 * bench:quote's venues step). Per mix request: PROBE_WARMUP (default 10) quotes, then PROBE_ROUNDS
 * (default 2) rounds of PROBE_QUOTES (default 40) quotes with distinct amounts; the process CPU
 * (process.cpuUsage: this thread, V8's helpers) of the whole quote, of the routing engine's route()
 * (pool discovery and states, then the search), of loadPools alone, and of the router's executions
 * (simulator.call to the router), and the counts: route() calls and executions per quote. The
 * last round's figures, per request and summed. Last line: one JSON object.
 * `nice -n 10 npx tsx scripts/probe/search-share.ts`
 */
import { readFileSync } from 'node:fs'
import type { Simulator } from '../../src/evm/simulator.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices } from '../../src/node/domain.ts'
import { RoutingEngine } from '../../src/routing/routing-engine.ts'
import { QUOTE_MIX } from '../../test/support/quote-mix.ts'

const WARMUP = Number(process.env.PROBE_WARMUP ?? 10)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 2)
const QUOTES = Number(process.env.PROBE_QUOTES ?? 40)

const REGISTRY_VENUES = (JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as { venues: Array<{ name: string }> }).venues
const UNISWAP_VENUES = JSON.stringify(REGISTRY_VENUES.filter((v) => v.name === 'uniswap-v2' || v.name === 'uniswap-v3'))

const cpuUs = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** CPU µs spent inside the patched functions (outermost call only), and call counts */
const tally = { routeUs: 0, routeCalls: 0, loadUs: 0, execUs: 0, execs: 0 }
let depth = 0

function patch(): void {
  const route = RoutingEngine.prototype.route
  RoutingEngine.prototype.route = async function (this: RoutingEngine, ...args: Parameters<typeof route>) {
    tally.routeCalls++
    const t = cpuUs()
    depth++
    try {
      return await route.apply(this, args)
    } finally {
      depth--
      tally.routeUs += cpuUs() - t
    }
  }
  const load = RoutingEngine.prototype.loadPools
  RoutingEngine.prototype.loadPools = async function (this: RoutingEngine, ...args: Parameters<typeof load>) {
    const t = cpuUs()
    try {
      return await load.apply(this, args)
    } finally {
      tally.loadUs += cpuUs() - t
    }
  }
}

async function measure(venues: string | undefined) {
  const domain = await openDomainServices(
    loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0', ...(venues === undefined ? {} : { VENUES: venues }) }),
    { log: { warn: () => {} } },
  )
  const router = domain.contracts.router.toLowerCase()
  const sim = domain.simulator as Simulator
  const call = sim.call.bind(sim)
  sim.call = async (state, request) => {
    if (depth > 0 || request.to?.toLowerCase() !== router) return call(state, request)
    const t = cpuUs()
    try {
      return await call(state, request)
    } finally {
      tally.execUs += cpuUs() - t
      tally.execs++
    }
  }
  let counter = 0
  const rows: Array<Record<string, unknown>> = []
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      rows.length = 0
      for (const [k, m] of QUOTE_MIX.entries()) {
        const n = round === 0 ? WARMUP : QUOTES
        Object.assign(tally, { routeUs: 0, routeCalls: 0, loadUs: 0, execUs: 0, execs: 0 })
        const t = cpuUs()
        let gas = 0n
        for (let i = 0; i < n; i++) gas = (await domain.quote.quote({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: m.amountIn + BigInt(++counter) })).gas
        const total = cpuUs() - t
        const per = (us: number) => Math.round(us / n) / 1000
        rows.push({ request: k, quote_ms: per(total), route_ms: per(tally.routeUs), load_pools_ms: per(tally.loadUs), exec_ms: per(tally.execUs), route_calls: tally.routeCalls / n, executions: tally.execs / n, gas: Number(gas) })
      }
    }
  } finally {
    await domain.close()
  }
  const sum = (key: string) => Math.round(1000 * rows.reduce((s, r) => s + (r[key] as number), 0) / rows.length) / 1000
  return { rows, per_quote: { quote_ms: sum('quote_ms'), route_ms: sum('route_ms'), load_pools_ms: sum('load_pools_ms'), exec_ms: sum('exec_ms'), route_calls: sum('route_calls'), executions: sum('executions') } }
}

patch()
const single = await measure(UNISWAP_VENUES)
const all = await measure(undefined)
for (const [name, r] of [['uniswap-v2 + uniswap-v3', single], ['every venue', all]] as const) {
  console.log(name)
  console.table(r.rows)
}
console.log(JSON.stringify({ name: 'probe:search-share', quotes_per_request: QUOTES, single: single.per_quote, all: all.per_quote }))
process.exit(0)
