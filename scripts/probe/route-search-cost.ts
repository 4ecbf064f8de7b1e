/**
 * What the route search costs per call and whether its answers moved (issue 12, seventeenth
 * session): the bench:quote mix through `routing.route` in process (`WORKERS=0`, the embedded
 * devnet, no answer cache). `PROBE_ROOT` (default this tree) names the tree loaded, so a copy of
 * an older tree can be measured beside this one. Prints, in order:
 *   - with `PROBE_DIGEST=1` (the default), the digests earlier sessions compared (h14/h15/h16-route,
 *     the method of their scratch loop): every route() outcome over 1,440 searches (the 8 mix pairs
 *     x 21 magnitudes x 3 factors x exactPoolsOnly, then 60 passes of the mix's amounts) and every
 *     quote answer over 512 quotes (the 8 pairs x 11 magnitudes x 2 factors, plain and with
 *     slippage, recipient and sender; then 20 passes of the mix), each `JSON.stringify`d and hashed;
 *     base 99515f8 gave route 864a220bfb446579 and quote ed8d8290603f3ed8;
 *   - the Map lookups and inserts per route() call over `PROBE_COUNT_PASSES` (20) passes of the mix
 *     (Map.prototype.get/set counted: a count that does not depend on the machine's load);
 *   - `PROBE_ROUNDS` (6) rounds of `PROBE_MIXES` (150) passes after `PROBE_WARMUP` (150): CPU ms
 *     per route() call (process.cpuUsage);
 * last line one JSON object with the digests, the counts, each round's figure, minimum and median.
 *   npx tsx scripts/probe/route-search-cost.ts
 *   PROBE_ROOT=/tmp/s17-base/base npx tsx scripts/probe/route-search-cost.ts
 */
import { createHash } from 'node:crypto'
import { resolve } from 'node:path'
import type { QuoteRequest } from '../../src/quote/types.ts'

const ROOT = resolve(process.env.PROBE_ROOT ?? '.')
const DIGEST = process.env.PROBE_DIGEST !== '0'
const COUNT_PASSES = Number(process.env.PROBE_COUNT_PASSES ?? 20)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 6)
const MIXES = Number(process.env.PROBE_MIXES ?? 150)
const WARMUP = Number(process.env.PROBE_WARMUP ?? 150)

const { loadConfig } = (await import(`${ROOT}/src/node/config.ts`)) as typeof import('../../src/node/config.ts')
const { openDomainServices } = (await import(`${ROOT}/src/node/domain.ts`)) as typeof import('../../src/node/domain.ts')
const { QUOTE_MIX } = (await import(`${ROOT}/test/support/quote-mix.ts`)) as typeof import('../../test/support/quote-mix.ts')

const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0' }), { log: { warn: () => {} } })
const routing = domain.routing
const reader = domain.chain.latest()
const bigintsAsText = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v)
const out: Record<string, unknown> = { name: 'probe:route-search-cost', root: ROOT }

/** amount of the ladder's step `e` (negative: a power of ten below the mix's amount; else a power of two above) */
const ladder = (amount: bigint, e: number, f: bigint): bigint => (e < 0 ? (amount * f) / 10n ** BigInt(-e) : amount * f * 2n ** BigInt(e))

if (DIGEST) {
  const routes = createHash('sha256')
  let searches = 0
  for (const q of QUOTE_MIX) {
    for (let e = -12; e <= 8; e++) {
      for (const f of [1n, 3n, 7n]) {
        const amountIn = ladder(q.amountIn, e, f)
        if (amountIn <= 0n) continue
        for (const exactPoolsOnly of [false, true]) {
          routes.update(JSON.stringify(await routing.route(reader, { tokenIn: q.tokenIn, tokenOut: q.tokenOut, amountIn: amountIn + 17n, exactPoolsOnly }), bigintsAsText))
          searches++
        }
      }
    }
  }
  for (let n = 0; n < 60; n++) {
    for (const q of QUOTE_MIX) {
      routes.update(JSON.stringify(await routing.route(reader, { ...q, amountIn: q.amountIn + BigInt(n) }), bigintsAsText))
      searches++
    }
  }
  const quotes = createHash('sha256')
  let quoted = 0
  const put = async (request: QuoteRequest): Promise<void> => {
    try {
      quotes.update(JSON.stringify(await domain.quote.quote(request), bigintsAsText))
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown }
      quotes.update(`ERR ${String(e?.code ?? '')} ${String(e?.message)}`)
    }
    quoted++
  }
  for (const q of QUOTE_MIX) {
    for (let e = -12; e <= 8; e += 2) {
      for (const f of [1n, 3n]) {
        const amountIn = ladder(q.amountIn, e, f) + 17n
        await put({ ...q, amountIn })
        await put({ ...q, amountIn, slippageBps: 30, recipient: '0x00000000000000000000000000000000000000b0', sender: e === 0 ? '0x00000000000000000000000000000000000000c1' : undefined })
      }
    }
  }
  for (let n = 0; n < 20; n++) for (const q of QUOTE_MIX) await put({ ...q, amountIn: q.amountIn + BigInt(n) })
  out.route_digest = routes.digest('hex').slice(0, 16)
  out.route_searches = searches
  out.quote_digest = quotes.digest('hex').slice(0, 16)
  out.quotes = quoted
  console.log(`route digest ${out.route_digest} over ${searches} searches; quote digest ${out.quote_digest} over ${quoted} quotes`)
}

let pass = 1000
const mixPass = async (): Promise<void> => {
  pass++
  for (const q of QUOTE_MIX) await routing.route(reader, { tokenIn: q.tokenIn, tokenOut: q.tokenOut, amountIn: q.amountIn + BigInt(pass) })
}

for (let i = 0; i < 5; i++) await mixPass()
const { get, set } = Map.prototype
let gets = 0
let sets = 0
Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
  gets++
  return get.call(this, key)
}
Map.prototype.set = function <K, V>(this: Map<K, V>, key: K, value: V) {
  sets++
  return set.call(this, key, value) as Map<K, V>
}
try {
  for (let i = 0; i < COUNT_PASSES; i++) await mixPass()
} finally {
  Map.prototype.get = get
  Map.prototype.set = set
}
const counted = COUNT_PASSES * QUOTE_MIX.length
out.map_gets_per_search = Math.round((10 * gets) / counted) / 10
out.map_sets_per_search = Math.round((10 * sets) / counted) / 10
console.log(`Map.get ${out.map_gets_per_search} and Map.set ${out.map_sets_per_search} per route() over ${counted} searches`)

for (let i = 0; i < WARMUP; i++) await mixPass()
const rounds: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  const from = process.cpuUsage()
  for (let i = 0; i < MIXES; i++) await mixPass()
  const d = process.cpuUsage(from)
  rounds.push((d.user + d.system) / 1000 / (MIXES * QUOTE_MIX.length))
}
const sorted = [...rounds].sort((a, b) => a - b)
out.cpu_ms_per_search = rounds.map((x) => Math.round(1000 * x) / 1000)
out.min_cpu_ms = Math.round(1000 * sorted[0]) / 1000
out.median_cpu_ms = Math.round(1000 * sorted[Math.floor(sorted.length / 2)]) / 1000
console.log(`route() CPU ms per call: ${rounds.map((x) => x.toFixed(3)).join(' ')}; min ${out.min_cpu_ms} median ${out.median_cpu_ms}`)
await domain.close()
console.log(JSON.stringify(out))
process.exit(0)
