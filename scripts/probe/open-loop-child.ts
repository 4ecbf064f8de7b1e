/**
 * The probe's load generator in its own process (so its event loop is not the service's): an open
 * loop of distinct mix quotes at RATE/s, COUNT requests, against URL; prints one JSON line: each
 * answered request's due time (epoch ms), latency, block number and mix index.
 */
import { runOpenLoop } from '../lib/open-loop.ts'
import { postQuote, quoteBody, QUOTE_MIX } from '../lib/quote-mix.ts'

const url = process.env.URL!
const rate = Number(process.env.RATE ?? 100)
const count = Number(process.env.COUNT ?? 2000)
const origin = performance.timeOrigin
const startEpoch = origin + performance.now()
const result = await runOpenLoop({
  rate,
  count,
  maxInFlight: 500,
  send: async (i) => BigInt((await postQuote(url, quoteBody(i, true), undefined, 10_000)).json.blockNumber as string),
})
const out = result.samples.map((s) => ({ i: s.index % QUOTE_MIX.length, due: startEpoch + s.scheduledMs, ms: s.latencyMs, block: Number(s.value) }))
console.log(JSON.stringify({ failures: result.failures, startEpoch, samples: out }))
