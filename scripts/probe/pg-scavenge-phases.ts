/**
 * Where a PostgreSQL replica's main-thread scavenges spend their time (issue 14).
 *
 * Starts bench:submit's one-replica PostgreSQL service (3) as it does (devnet mode, DATABASE_URL, the
 * recording relay), with V8's `--trace-gc-nvp` switched on by scripts/probe/v8-trace-preload.mjs
 * (`v8.setFlagsFromString`: V8 flags are refused in NODE_OPTIONS, and the start script's own arguments
 * stay as they are), sends PROBE_WARM submissions one at a time, then PROBE_RATE/s for PROBE_SECONDS
 * (open loop), and prints for
 * the main isolate's scavenges in that loop: their count per 1,000 acknowledgements, the pause and each
 * nvp phase (roots, the parallel copy/promote, old-to-new update, array buffers, weak handles), the
 * bytes that survived in new space and were promoted; and the main thread's CPU ms per answer
 * (/proc/<pid>/task/<pid>/stat). The main isolate is the one whose nvp lines fill most of the loop.
 *
 * Run from the checkout whose service is to be measured (the spawned `src/main.ts` is the cwd's):
 *   npx tsx scripts/probe/pg-scavenge-phases.ts
 * PROBE_RATE (200), PROBE_SECONDS (20), PROBE_WARM (200), PROBE_TRACE_DIR (kept nvp output; default a
 * temporary directory, removed), PROBE_VERBOSE=1 adds `--trace-gc-verbose`, PROBE_V8_FLAGS more V8 flags,
 * PROBE_NODE_OPTIONS more of the service's NODE_OPTIONS (`--inspect=127.0.0.1:0` for
 * scripts/probe/promoted-allocations.ts, with this probe's stderr, the service's, in a file).
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { startTestPostgres } from '../../test/support/embedded-postgres.ts'
import { freePort } from '../../test/support/net.ts'
import { startServiceProcess } from '../../test/support/service-process.ts'
import { stopProcess } from '../../test/support/cluster.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { recordingRelay } from '../lib/recording-relay.ts'
import { signSwaps } from '../lib/submit-load.ts'
import { threadCpuSeconds } from '../lib/process-cpu.ts'

const RATE = Number(process.env.PROBE_RATE ?? 200)
const SECONDS = Number(process.env.PROBE_SECONDS ?? 20)
const WARM = Number(process.env.PROBE_WARM ?? 200)
const VERBOSE = process.env.PROBE_VERBOSE === '1'
/**
 * 1: a heap snapshot of the main isolate before and after the loop (Node's --heapsnapshot-signal, into
 * the trace directory), for scripts/probe/heap-snapshot-diff.ts: what the loop added and still holds.
 * The snapshots stop the service for seconds, outside the loop's CPU and trace window.
 */
const SNAPSHOTS = process.env.PROBE_SNAPSHOTS === '1'
/** more V8 flags set by the same preload (space-separated), e.g. `--no-parallel-scavenge`: a flag tried without changing the start script */
const V8_FLAGS = (process.env.PROBE_V8_FLAGS ?? '').split(/\s+/).filter((f) => f !== '')

/** one scavenge's nvp fields that say where its pause went (ms) and what it moved (bytes) */
const PHASES = [
  'pause', 'time_to_safepoint', 'heap.external.prologue', 'heap.external.epilogue', 'heap.external_weak_global_handles',
  'scavenge.free_remembered_set', 'scavenge.roots', 'scavenge.weak', 'scavenge.weak_global_handles.identify',
  'scavenge.weak_global_handles.process', 'scavenge.parallel', 'scavenge.update_refs', 'scavenge.sweep_array_buffers',
  'background.scavenge.parallel', 'complete.sweep_array_buffers', 'fast_promote',
] as const
const BYTES = ['allocated', 'new_space_survived', 'promoted', 'total_size_before'] as const

export interface Scavenge {
  isolate: string
  fields: Record<string, number>
}

/** the scavenges (gc=s) in nvp text, with every numeric field */
export function parseScavenges(text: string): Scavenge[] {
  const out: Scavenge[] = []
  for (const line of text.split('\n')) {
    const head = /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (.*)$/.exec(line)
    if (head === null || !/\bgc=s\b/.test(head[2]!)) continue
    const fields: Record<string, number> = {}
    for (const m of head[2]!.matchAll(/([\w.]+)=([\d.]+)%?/g)) fields[m[1]!] = Number(m[2])
    out.push({ isolate: head[1]!, fields })
  }
  return out
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]!
}

function submit(url: URL, raw: Hex): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: raw }] })
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, timeout: 30_000 }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c))
      res.on('end', () => ((JSON.parse(text) as { result?: string }).result === undefined ? reject(new Error(text)) : resolve()))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(body)
  })
}

/** SIGUSR2 to the service, then wait until its new .heapsnapshot file stops growing */
async function snapshot(pid: number, dir: string): Promise<void> {
  const before = new Set(readdirSync(dir))
  process.kill(pid, 'SIGUSR2')
  for (let i = 0, size = -1; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 500))
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f))
    if (file === undefined) continue
    const now = statSync(join(dir, file)).size
    if (now === size && now > 0) return console.log(`snapshot ${join(dir, file)}`)
    size = now
  }
  throw new Error('no heap snapshot within 300 s')
}

async function main(): Promise<void> {
  const dir = process.env.PROBE_TRACE_DIR ?? mkdtempSync(join(tmpdir(), 'pg-scavenge-'))
  const traceFile = join(dir, `nvp-${Date.now()}.txt`)
  const txs = await signSwaps(WARM + RATE * SECONDS, 0)
  const relay = await recordingRelay()
  const pg = await startTestPostgres()
  const dataDir = mkdtempSync(join(tmpdir(), 'pg-scavenge-data-'))
  const fd = openSync(traceFile, 'w')
  try {
    const port = await freePort()
    const env = {
      DATA_DIR: dataDir, DATABASE_URL: await pg.createDatabase(), RELAYS: JSON.stringify([{ name: 'recorder', url: relay.url }]),
      LOCAL_BUILDER_PORT: '0', MAX_PENDING_SUBMISSIONS: String(txs.length + 1),
      // the preload's own `@@mark` lines in the trace are not nvp lines: parseScavenges skips them
      PROBE_V8_FLAGS: ['--trace-gc-nvp', ...(VERBOSE ? ['--trace-gc-verbose'] : []), ...V8_FLAGS].join(' '),
      NODE_OPTIONS: `--import ./scripts/probe/v8-trace-preload.mjs${process.env.PROBE_NODE_OPTIONS === undefined ? '' : ` ${process.env.PROBE_NODE_OPTIONS}`}${SNAPSHOTS ? ` --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}` : ''}`,
    }
    const service = await startServiceProcess(port, env, undefined, fd)
    try {
      const url = new URL(`http://127.0.0.1:${port}/rpc/${DEV_PARTNER_TOKEN}/submit`)
      for (let i = 0; i < WARM; i++) await submit(url, txs[i]!)
      if (SNAPSHOTS) await snapshot(service.pid!, dir)
      const from = statSync(traceFile).size
      const cpu0 = threadCpuSeconds(service.pid!, service.pid!)
      const pending: Array<Promise<void>> = []
      let failed = 0
      const start = performance.now()
      for (let i = WARM; i < txs.length; i++) {
        const wait = start + ((i - WARM) * 1000) / RATE - performance.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        pending.push(submit(url, txs[i]!).catch(() => void failed++))
      }
      await Promise.all(pending)
      const mainMs = (threadCpuSeconds(service.pid!, service.pid!) - cpu0) * 1000
      const wall = (performance.now() - start) / 1000
      const to = statSync(traceFile).size
      const text = readFileSync(traceFile, 'utf8').slice(from, to)
      if (SNAPSHOTS) await snapshot(service.pid!, dir)
      const answers = txs.length - WARM - failed
      const all = parseScavenges(text)
      const counts = new Map<string, number>()
      for (const s of all) counts.set(s.isolate, (counts.get(s.isolate) ?? 0) + 1)
      const mainIsolate = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0]
      const ours = all.filter((s) => s.isolate === mainIsolate)
      const phases = Object.fromEntries(PHASES.map((p) => {
        const xs = ours.map((s) => s.fields[p] ?? 0)
        return [p, { sum: +sum(xs).toFixed(1), median: +median(xs).toFixed(2), max: +Math.max(0, ...xs).toFixed(2) }]
      }))
      const bytes = Object.fromEntries(BYTES.map((b) => [b, { medianKb: Math.round(median(ours.map((s) => s.fields[b] ?? 0)) / 1024), perAnswerB: Math.round(sum(ours.map((s) => s.fields[b] ?? 0)) / Math.max(1, answers)) }]))
      console.log(`isolates' scavenges in the loop: ${JSON.stringify(Object.fromEntries(counts))}; main ${mainIsolate}`)
      console.log(`answers ${answers} (failed ${failed}) in ${wall.toFixed(1)} s; main-thread CPU ${(mainMs / Math.max(1, answers)).toFixed(3)} ms per answer`)
      console.log(`main isolate: ${ours.length} scavenges, ${((ours.length * 1000) / Math.max(1, answers)).toFixed(1)} per 1,000 answers, ${((sum(ours.map((s) => s.fields.pause ?? 0)) * 1000) / Math.max(1, answers)).toFixed(1)} ms of pause per 1,000 answers`)
      for (const [p, v] of Object.entries(phases)) console.log(`  ${p.padEnd(40)} sum ${String(v.sum).padStart(8)} ms  median ${String(v.median).padStart(7)}  max ${v.max}`)
      for (const [b, v] of Object.entries(bytes)) console.log(`  ${b.padEnd(40)} median ${v.medianKb} KB a scavenge, ${v.perAnswerB} B per answer`)
      console.log(JSON.stringify({ answers, failed, main_cpu_ms_per_answer: +(mainMs / Math.max(1, answers)).toFixed(3), scavenges: ours.length, scavenge_ms_per_1000: +((sum(ours.map((s) => s.fields.pause ?? 0)) * 1000) / Math.max(1, answers)).toFixed(1), phases, bytes, trace: process.env.PROBE_TRACE_DIR === undefined ? undefined : traceFile }))
    } finally {
      await stopProcess(service, 10_000)
    }
  } finally {
    closeSync(fd)
    rmSync(dataDir, { recursive: true, force: true })
    await pg.close()
    relay.server.close()
    if (process.env.PROBE_TRACE_DIR === undefined) rmSync(dir, { recursive: true, force: true })
  }
}

await main()
