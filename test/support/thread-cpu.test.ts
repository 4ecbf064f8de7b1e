import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import {
  descendantsIn,
  msPer,
  parseProcStat,
  sampleThreads,
  scalingCeiling,
  threadCpuBetween,
  threadCpuPer,
  throughputCeiling,
  v8PoolSize,
  type ProcStat,
  type ThreadSample,
} from './thread-cpu.ts'

/** a stat line as the kernel writes it, with the fields the parser reads set */
function statLine(id: number, comm: string, f: { ppid?: number; utime?: number; stime?: number; nice?: number; start?: number }): string {
  const fields = ['S', f.ppid ?? 1, id, id, 0, -1, 4194560, 100, 0, 0, 0, f.utime ?? 0, f.stime ?? 0, 0, 0, 20, f.nice ?? 0, 12, 0, f.start ?? 0, 1_000_000, 2_000, 0]
  return `${id} (${comm}) ${fields.join(' ')}\n`
}

const thread = (id: number, cpuTicks: number, startTicks: number): ProcStat => ({ id, comm: 'node', ppid: 1, cpuTicks, startTicks, nice: 0 })

describe('parseProcStat', () => {
  it('reads the fields after the last parenthesis, whatever the command name holds', () => {
    const s = parseProcStat(statLine(4242, 'a (b) c', { ppid: 17, utime: 250, stime: 40, nice: 10, start: 999 }))
    expect(s).toEqual({ id: 4242, comm: 'a (b) c', ppid: 17, cpuTicks: 290, startTicks: 999, nice: 10 })
  })

  it('refuses what is not a stat line', () => {
    expect(() => parseProcStat('4242 node S 1 2 3')).toThrow(/not a \/proc stat line/)
    expect(() => parseProcStat('4242 (node) S x')).toThrow(/not a \/proc stat line/)
  })
})

describe('v8PoolSize', () => {
  it("is Node's default 4, the last --v8-pool-size given, or the cores less one for 0", () => {
    expect(v8PoolSize(['node', '--import', 'tsx', 'src/main.ts'], 2)).toBe(4)
    expect(v8PoolSize(['--v8-pool-size=1', 'node', '--v8-pool-size=2'], 2)).toBe(2)
    expect(v8PoolSize(['node', '--v8-pool-size', '3'], 2)).toBe(3)
    expect(v8PoolSize(['node', '--v8-pool-size=0'], 2)).toBe(1)
    expect(v8PoolSize(['node', '--v8-pool-size=0'], 8)).toBe(7)
  })
})

describe('threadCpuBetween', () => {
  // pid 100; 101-105 V8's platform (created first), 106-109 libuv, 110 and 112 the workers, 111 a
  // loader thread; 113 starts during the window; a thread that exited left 30 ticks in the process's counter
  const before: ThreadSample = {
    pid: 100,
    processTicks: 1_000,
    threads: [thread(100, 500, 10), ...[101, 102, 103, 104, 105].map((t) => thread(t, 20, 10)), ...[106, 107, 108, 109].map((t) => thread(t, 1, 12)), thread(110, 100, 40), thread(111, 50, 40), thread(112, 90, 41), thread(114, 5, 50)],
  }
  const after: ThreadSample = {
    pid: 100,
    processTicks: 1_000 + 100 + 5 * 10 + 4 * 2 + 300 + 1 + 280 + 7 + 30,
    threads: [thread(100, 600, 10), ...[101, 102, 103, 104, 105].map((t) => thread(t, 30, 10)), ...[106, 107, 108, 109].map((t) => thread(t, 3, 12)), thread(110, 400, 40), thread(111, 51, 40), thread(112, 370, 41), thread(113, 7, 60)],
  }

  it('tells the main thread, the workers, V8 platform threads and the rest apart', () => {
    const cpu = threadCpuBetween(before, after, { ticksPerSecond: 100, workers: 2, poolSize: 4 })
    expect(cpu.total).toBeCloseTo(7.76, 10)
    expect(cpu.main).toBeCloseTo(1, 10)
    expect(cpu.workers).toEqual([3, 2.8])
    expect(cpu.v8Platform).toBeCloseTo(0.5, 10)
    // libuv 0.08, the loader 0.01, the new thread 0.07, the exited one's 0.3 (the process's counter)
    expect(cpu.other).toBeCloseTo(0.46, 10)
    expect(cpu.main + cpu.workers[0] + cpu.workers[1] + cpu.v8Platform + cpu.other).toBeCloseTo(cpu.total, 10)
  })

  it('takes the platform threads by creation order, not by tid alone nor by how busy they are', () => {
    // the platform threads' tids come after a wrapped counter's: their start time still puts them first
    const wrapped: ThreadSample = { ...after, threads: after.threads.map((t) => (t.id >= 101 && t.id <= 105 ? { ...t, id: t.id + 30_000 } : t)) }
    const from: ThreadSample = { ...before, threads: before.threads.map((t) => (t.id >= 101 && t.id <= 105 ? { ...t, id: t.id + 30_000 } : t)) }
    const cpu = threadCpuBetween(from, wrapped, { ticksPerSecond: 100, workers: 2, poolSize: 4 })
    expect(cpu.v8Platform).toBeCloseTo(0.5, 10)
    expect(cpu.workers).toEqual([3, 2.8])
  })

  it('with no workers (WORKERS=0) leaves every other thread in `other`', () => {
    const cpu = threadCpuBetween(before, after, { ticksPerSecond: 100, workers: 0, poolSize: 4 })
    expect(cpu.workers).toEqual([])
    expect(cpu.other).toBeCloseTo(0.46 + 5.8, 10)
  })

  it('finds a busy worker thread of this very process in /proc', async () => {
    const pid = process.pid
    const s0 = sampleThreads(pid)
    expect(s0.threads.some((t) => t.id === pid)).toBe(true)
    // a fixed amount of work, however long the machine makes it wait for a core
    const worker = new Worker('let x = 0; for (let i = 0; i < 4e8; i++) x = (x + i) | 0; require("node:worker_threads").parentPort.postMessage(x)', { eval: true })
    await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    const s1 = sampleThreads(pid)
    await worker.terminate()
    const cpu = threadCpuBetween(s0, s1, { ticksPerSecond: 100, workers: 1, poolSize: 4 })
    expect(cpu.workers[0]).toBeGreaterThan(0.05)
    expect(cpu.workers[0]).toBeGreaterThan(cpu.main)
    expect(cpu.total).toBeGreaterThanOrEqual(cpu.workers[0])
  }, 60_000)
})

describe('per unit and ceilings', () => {
  it('gives ms per unit, NaN without work', () => {
    expect(msPer(1.5, 300)).toBe(5)
    expect(msPer(1, 0)).toBeNaN()
    expect(threadCpuPer({ total: 2, main: 0.5, workers: [1, 0.4], v8Platform: 0.05, other: 0.05 }, 400)).toEqual({ total: 5, main: 1.25, workers: [2.5, 1], v8_platform: 0.125, other: 0.125 })
  })

  it('bounds throughput by the cores over the CPU per unit of every process', () => {
    // the tenth session's idle run: 4.28 CPU ms per answer over every process, 2 cores
    expect(throughputCeiling(2, 4.28)).toBeCloseTo(467.29, 2)
    expect(throughputCeiling(2, 0)).toBeNaN()
  })

  it("bounds workers_scaling by WORKERS=2's requests/s ceiling over WORKERS=1's measured requests/s", () => {
    // 261.25 req/s at WORKERS=1; 5.64 + 0.19 ms per quote (service + generator) at WORKERS=2
    expect(scalingCeiling(2, 5.83, 261.25)).toBeCloseTo(2000 / 5.83 / 261.25, 10)
    expect(scalingCeiling(2, 5.83, 261.25)).toBeCloseTo(1.313, 3)
    // 1.8 needs the CPU per quote at or below 2000 / (1.8 x rps1)
    expect(scalingCeiling(2, 2000 / (1.8 * 200), 200)).toBeCloseTo(1.8, 10)
    expect(scalingCeiling(2, 5, 0)).toBeNaN()
  })
})

describe('descendantsIn', () => {
  it("follows parent links to the root, not the root's siblings nor itself", () => {
    const p = (id: number, ppid: number): [number, ProcStat] => [id, { id, comm: 'x', ppid, cpuTicks: 0, startTicks: 0, nice: 0 }]
    const all = new Map([p(10, 1), p(11, 10), p(12, 11), p(13, 1), p(14, 13), p(15, 12)])
    expect([...descendantsIn(all, 10).keys()].sort()).toEqual([11, 12, 15])
    expect([...descendantsIn(all, 13).keys()]).toEqual([14])
  })
})

describe('threadCpuBetween, counters read a moment apart', () => {
  it("keeps the live threads' CPU when the process's counter, read first, is behind them", () => {
    const before: ThreadSample = { pid: 1, processTicks: 100, threads: [thread(1, 50, 1), ...[2, 3, 4, 5, 6].map((t) => thread(t, 10, 1)), thread(7, 0, 5), thread(8, 0, 9)] }
    // the process read 40 ticks of the window, its threads went on to 44 before they were read
    const after: ThreadSample = { pid: 1, processTicks: 140, threads: [thread(1, 60, 1), ...[2, 3, 4, 5, 6].map((t) => thread(t, 10, 1)), thread(7, 4, 5), thread(8, 30, 9)] }
    const cpu = threadCpuBetween(before, after, { ticksPerSecond: 100, workers: 1, poolSize: 4 })
    expect(cpu.workers).toEqual([0.3])
    expect(cpu.other).toBeCloseTo(0.04, 10)
    expect(cpu.total).toBeCloseTo(0.44, 10)
  })
})
