/**
 * A fixed CPU workload timed in a fresh Node process, so that a benchmark can say how fast this
 * machine ran while it measured. This VM's speed varies by up to ~40% between minutes (every
 * thread slower together, no steal time in /proc/stat: the fifteenth session's four idle runs of
 * one commit gave `cpu_ms_per_quote` 3.39-4.82), and a CPU-per-operation figure inherits that. The
 * same workload run right before and right after a measured window lets a reader tell the machine
 * from the code: when `before`/`after` are 30% above their usual value, so is the window's CPU.
 *
 * The workload is none of the service's code (a change to the service cannot move it): 256-bit
 * bigint arithmetic (the EVM's words), SHA3-256 of 64-byte inputs (the EVM's keccak is the same
 * permutation) and short-lived objects in a Map (what a request allocates). It runs in its own
 * process so that neither its JIT state nor its garbage touches the benchmark's.
 */
import { execFileSync } from 'node:child_process'

/** the child's program: prints the workload's own CPU ms (user + system), start-up excluded */
const WORKLOAD = `
const { createHash } = await import('node:crypto')
function work() {
  const mask = (1n << 256n) - 1n
  let x = 0x1234567890abcdef1234567890abcdefn, acc = 0n
  for (let i = 0; i < 200000; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & mask
    acc ^= (x >> 17n) + (x % 1000003n)
  }
  const input = Buffer.alloc(64, 7)
  for (let i = 0; i < 40000; i++) {
    input.writeUInt32BE(i, 0)
    createHash('sha3-256').update(input).digest()
  }
  const map = new Map()
  for (let i = 0; i < 300000; i++) map.set('k' + (i % 4096), { i, words: [i, i + 1, i + 2] })
  return acc + BigInt(map.size)
}
work()
const start = process.cpuUsage()
work()
const used = process.cpuUsage(start)
process.stdout.write(String((used.user + used.system) / 1000))
`

export interface Calibration {
  /** the fastest of the runs, CPU ms of one pass of the workload */
  min_ms: number
  /** the median of the runs */
  median_ms: number
}

/**
 * Runs the workload `runs` times, each in a fresh `node` process, one after the other.
 * @throws Error when a child fails or prints something that is not a number
 */
export function calibrate(runs = 3): Calibration {
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', WORKLOAD], { encoding: 'utf8', timeout: 60_000 })
    const ms = Number(out.trim())
    if (!Number.isFinite(ms) || ms <= 0) throw new Error(`cpu calibration: the workload printed ${JSON.stringify(out)}`)
    samples.push(ms)
  }
  samples.sort((a, b) => a - b)
  const round = (v: number) => Math.round(v * 10) / 10
  return { min_ms: round(samples[0]!), median_ms: round(samples[Math.floor(samples.length / 2)]!) }
}

/** a one-line summary for a benchmark's console */
export function describeCalibration(label: string, c: Calibration): string {
  return `cpu calibration ${label}: fixed workload ${c.min_ms} ms (min), ${c.median_ms} ms (median) in a fresh process`
}
