/**
 * npx tsx scripts/probe/ack-rpc-cost.ts
 *
 * What the JSON-RPC part of one acknowledgement costs the thread that acknowledges (issues 13 and
 * 14), in process and without HTTP or a store: for each of ACK_COST_COUNT distinct signed swaps of
 * bench:submit's load (scripts/lib/submit-load.ts), the token resolved, the body parsed, the
 * envelope checked, the call's logger, the parameters read and the transaction decoded (sender
 * recovery included), as the service's eth_sendPrivateRawTransaction does, answered by an acceptor
 * that takes every submission at once (the store is measured by bench:submit). The first
 * ACK_COST_WARM are a warm-up.
 *
 * Printed per acknowledgement: the main thread's CPU (/proc), the process's (process.cpuUsage: V8's
 * platform threads, GC helpers and compilers, are the difference), and the GC pauses (count and
 * total), with the live heap at the end. A count, not a latency: alternate it between two trees
 * (copy this file into a `git archive` of the other) to compare them on a shared machine.
 * Last line: one JSON object.
 */
import { readFileSync } from 'node:fs'
import { PerformanceObserver } from 'node:perf_hooks'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { parseProcStat } from '../../test/support/thread-cpu.ts'
import { clockTicks } from '../lib/process-cpu.ts'
import { signSwaps } from '../lib/submit-load.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { dispatchOne } from '../../src/server/jsonrpc/dispatch.ts'
import { parseJsonText } from '../../src/server/jsonrpc/envelope.ts'
import { MethodRegistry } from '../../src/server/jsonrpc/methods.ts'
import { createPartnerRegistry } from '../../src/server/jsonrpc/partners.ts'
import { submissionMethods } from '../../src/server/rpc/submission-methods.ts'
import { submissionId, type NewSubmission, type SubmissionRecord } from '../../src/submission/types.ts'

const COUNT = Number(process.env.ACK_COST_COUNT ?? 6000)
const WARM = Number(process.env.ACK_COST_WARM ?? 1000)
if (!(Number.isSafeInteger(WARM) && WARM >= 0 && Number.isSafeInteger(COUNT) && COUNT > WARM)) throw new RangeError('ACK_COST_COUNT must be an integer above ACK_COST_WARM')

console.error(`signing ${COUNT} transactions...`)
const bodies = (await signSwaps(COUNT, 0)).map((tx, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendPrivateRawTransaction', params: [{ tx }] }))

// the service's level under bench:submit; lines written go nowhere
const log = pino({ level: 'warn' }, new Writable({ write: (_chunk, _encoding, done) => done() }))
const submit = submissionMethods({
  submissions: {
    accept: async (input: NewSubmission) => {
      const record: SubmissionRecord = { id: submissionId(input.kind, '0x'), kind: input.kind, hash: '0x', partnerId: input.partnerId, receivedAt: 0, rawTxs: [], txHashes: [] }
      return { created: true, record }
    },
  },
  decode: { chainId: 31337n, hardfork: 'prague' },
})
const registry = new MethodRegistry({ backrun: {}, submit })
const partners = createPartnerRegistry([{ partnerId: 'dev', token: DEV_PARTNER_TOKEN }])

async function acknowledge(i: number): Promise<void> {
  const partnerId = partners.resolve(DEV_PARTNER_TOKEN)
  const parsed = parseJsonText(bodies[i])
  if (partnerId === undefined || !parsed.ok) throw new Error('the dev token or the body was refused')
  const answer = await dispatchOne(parsed.value, { endpoint: 'submit', partnerId, log, registry, requestId: `req-${i}` })
  if (answer === null || !answer.includes('"result"')) throw new Error(`not acknowledged: ${answer}`)
}

function mainThreadCpuMs(): number {
  const stat = parseProcStat(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'))
  return (stat.cpuTicks * 1000) / clockTicks()
}

for (let i = 0; i < WARM; i++) await acknowledge(i)
let pauses = 0
let pauseMs = 0
const gc = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    pauses++
    pauseMs += entry.duration
  }
})
gc.observe({ entryTypes: ['gc'] })
const processBefore = process.cpuUsage()
const mainBefore = mainThreadCpuMs()
for (let i = WARM; i < COUNT; i++) await acknowledge(i)
const processMs = (() => {
  const used = process.cpuUsage(processBefore)
  return (used.user + used.system) / 1000
})()
const mainMs = mainThreadCpuMs() - mainBefore
// the observer is called after the entries' turn
await new Promise((resolve) => setTimeout(resolve, 50))
gc.disconnect()

const n = COUNT - WARM
const us = (ms: number): number => Math.round((ms * 1000 * 10) / n) / 10
console.log(
  JSON.stringify({
    name: 'ack-rpc-cost',
    acks: n,
    main_cpu_us_per_ack: us(mainMs),
    other_threads_cpu_us_per_ack: us(processMs - mainMs),
    process_cpu_us_per_ack: us(processMs),
    gc_pauses: pauses,
    gc_pause_ms: Math.round(pauseMs * 10) / 10,
    heap_used_mb: Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10,
  }),
)
