/**
 * Which of the service's functions V8 deoptimizes and compiles again once it is warm (issue 12,
 * h21-evm): starts the service as `npm start` does, with scripts/probe/v8-trace-preload.mjs setting
 * `--trace-opt --trace-deopt-verbose` (PROBE_V8_FLAGS overrides) in its process, sends the quote
 * mix's distinct requests for PROBE_SECONDS (default 180) over PROBE_CONNECTIONS (default 4)
 * connections and, at the same time, eth_backrun of the fixture swaps (fixtures/txs, as
 * bench:backrun sends them) one after another (PROBE_BACKRUNS=0: none), and writes the service's
 * stdout (V8's trace, with "@@mark <s>" lines every 5 s) to PROBE_OUT (default
 * /tmp/inline-deopts.txt). Then it prints, after PROBE_WARMUP_SECONDS (default 60), every
 * deoptimization with its reason and source position, and one JSON object as its last line: the
 * compilations and deoptimizations per minute, those of PROBE_FUNCTIONS (the EVM's batch and its
 * callees by default) apart with each deoptimization, and the warm ones by function. The last
 * minute holds the service's shutdown.
 *
 *   npx tsx scripts/probe/inline-deopts.ts
 *
 * V8 writes its trace through a buffered stdout: a line may land a few kilobytes after the mark
 * that follows it, so the times are good to a mark or so.
 */
import { openSync, closeSync, readFileSync } from 'node:fs'
import { quoteLoad } from '../lib/quote-mix.ts'
import { startServiceProcess } from '../../test/support/service-process.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { parseTransaction } from 'viem'

const SECONDS = Number(process.env.PROBE_SECONDS ?? 180)
const WARMUP = Number(process.env.PROBE_WARMUP_SECONDS ?? 60)
const CONNECTIONS = Number(process.env.PROBE_CONNECTIONS ?? 4)
const OUT = process.env.PROBE_OUT ?? '/tmp/inline-deopts.txt'
const FLAGS = process.env.PROBE_V8_FLAGS ?? '--trace-opt --trace-deopt-verbose'
/** the functions whose compilations and deoptimizations per minute the JSON lists apart (the EVM's batch and its callees) */
const FUNCTIONS = (process.env.PROBE_FUNCTIONS ?? 'runInlineSteps,iproto.run,writeWord,readWord,wordAt').split(',')
const BACKRUNS = process.env.PROBE_BACKRUNS !== '0'
const PORT = Number(process.env.PROBE_PORT ?? 18_000 + (process.pid % 1000))

interface Deopt {
  at: number
  fn: string
  kind: string
  reason: string
  position: string
}

/** the compilations and deoptimizations of a trace, each at the time of the last mark before it */
function readTrace(text: string): { compiled: { at: number; fn: string }[]; deopts: Deopt[] } {
  let at = 0
  const compiled: { at: number; fn: string }[] = []
  const deopts: Deopt[] = []
  let last: Deopt | undefined
  for (const line of text.split('\n')) {
    const mark = /^@@mark ([\d.]+)/.exec(line)
    if (mark !== null) {
      at = Number(mark[1])
      continue
    }
    const opt = /^\[completed optimizing .*?<JSFunction (\S+)/.exec(line)
    if (opt !== null) {
      compiled.push({ at, fn: opt[1] })
      continue
    }
    const bail = /^\[bailout \(kind: ([^,]+), reason: ([^)]*)\).*?<JSFunction (\S+)/.exec(line)
    if (bail !== null) {
      last = { at, fn: bail[3], kind: bail[1], reason: bail[2], position: '' }
      deopts.push(last)
      continue
    }
    const where = /;;; deoptimize at <([^>]*)>(.*)/.exec(line)
    if (where !== null && last !== undefined && last.position === '') last.position = (where[1] + where[2]).replace(/file:\/\/\S*?\/(src|node_modules)\//g, '$1/')
  }
  return { compiled, deopts }
}

interface FixtureTx {
  name: string
  raw: `0x${string}`
  from: string
  to: string
  value?: string
  expected: { status: number; balanceChanges: Array<{ address: string; deltas: Record<string, string> }> }
}

/** eth_backrun's params for every successful fixture swap: tokenIn and amountIn what its sender spent (bench:backrun's `request`) */
function backrunRequests(): object[] {
  const tokens = (JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as { tokens: Array<{ symbol: string; address: string }> }).tokens
  const fixtures = (JSON.parse(readFileSync('fixtures/txs/transactions.json', 'utf8')) as { transactions: FixtureTx[] }).transactions
  return fixtures
    .filter((f) => f.expected.status === 1 && f.name !== 'eth-transfer')
    .map((fx) => {
      const calldata = parseTransaction(fx.raw).data ?? '0x'
      const sender = fx.expected.balanceChanges.find((c) => c.address.toLowerCase() === fx.from.toLowerCase())!
      const spent = Object.entries(sender.deltas).find(([symbol, delta]) => symbol !== 'ETH' && BigInt(delta) < 0n)
      const value = BigInt(fx.value ?? '0')
      const to = fx.to.toLowerCase()
      return spent === undefined
        ? { to, calldata, value: value.toString(), tokenIn: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', amountIn: value.toString() }
        : { to, calldata, value: value.toString(), tokenIn: tokens.find((t) => t.symbol === spent[0])!.address.toLowerCase(), amountIn: (-BigInt(spent[1])).toString() }
    })
}

/** eth_backrun of `requests` in turn until `until` (performance.now()); answers how many answered without an error */
async function backrunLoop(url: string, requests: object[], until: number): Promise<number> {
  let answered = 0
  for (let i = 0; performance.now() < until; i++) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_backrun', params: [requests[i % requests.length]] }), signal: AbortSignal.timeout(10_000) })
    const body = (await res.json()) as { error?: unknown }
    if (body.error === undefined) answered++
  }
  return answered
}

const log = openSync(OUT, 'w')
const service = await startServiceProcess(PORT, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ./scripts/probe/v8-trace-preload.mjs`, PROBE_V8_FLAGS: FLAGS }, undefined, log)
let answered = 0
let backruns = 0
try {
  const until = performance.now() + SECONDS * 1000
  const [result, done] = await Promise.all([quoteLoad(`http://127.0.0.1:${PORT}/v1/quote`, CONNECTIONS, SECONDS), BACKRUNS ? backrunLoop(`http://127.0.0.1:${PORT}/rpc/${DEV_PARTNER_TOKEN}/backrun`, backrunRequests(), until) : 0])
  answered = result['2xx']
  backruns = done
} finally {
  service.kill('SIGTERM')
  await new Promise((r) => service.once('exit', r))
  closeSync(log)
}
const { compiled, deopts } = readTrace(readFileSync(OUT, 'utf8'))
const warm = deopts.filter((d) => d.at >= WARMUP)
for (const d of warm) console.log(`${d.at.toFixed(0).padStart(4)} s  ${d.fn}  ${d.kind}: ${d.reason}  at ${d.position}`)
const perMinute = (items: { at: number }[]) => {
  const counts: number[] = []
  for (const item of items) counts[Math.floor(item.at / 60)] = (counts[Math.floor(item.at / 60)] ?? 0) + 1
  return Array.from(counts, (c) => c ?? 0)
}
const byFunction = (items: { fn: string }[]) => {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(item.fn, (counts.get(item.fn) ?? 0) + 1)
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, 20))
}
const functions = Object.fromEntries(FUNCTIONS.map((fn) => [fn, { compilations_per_minute: perMinute(compiled.filter((c) => c.fn === fn)), deopts_per_minute: perMinute(deopts.filter((d) => d.fn === fn)), deopts: deopts.filter((d) => d.fn === fn).map((d) => `${d.at.toFixed(0)} s ${d.reason} at ${d.position}`) }]))
console.log(JSON.stringify({ name: 'inline-deopts', seconds: SECONDS, warmup_seconds: WARMUP, answered, backruns, compilations_per_minute: perMinute(compiled), deopts_per_minute: perMinute(deopts), functions, warm_compilations_by_function: byFunction(compiled.filter((c) => c.at >= WARMUP)), warm_deopts_by_function: byFunction(warm) }))
