import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterEach, describe, expect, it } from 'vitest'

import { Dispatcher, OutboxStore, RelayClient, SearcherKey, summarizeLifecycle } from '../../src/submission/index.ts'
import { CHAIN_ID, FixedPlanner, ManualHeads, ManualInclusion, SEARCHER_KEY_HEX, sentTxs, simulator, startRelay, tempDir } from './helpers.ts'

const ACKS_BEFORE_KILL = 40
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const writerScript = fileURLToPath(new URL('./fixtures/ack-writer.ts', import.meta.url))

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined)
})

/** Start the writer and SIGKILL it as soon as it has acknowledged `count` submissions. */
function ackThenKill(dataDir: string, count: number): Promise<{ acked: string[]; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', writerScript, dataDir], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    const acked: string[] = []
    let buffered = ''
    let stderr = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`writer acknowledged only ${acked.length} submissions in time; stderr: ${stderr}`))
    }, 60_000)
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      for (const line of lines) {
        // every ACK printed before the process died was an acknowledgement, also those after the kill was sent
        if (line.startsWith('ACK ')) {
          acked.push(line.slice(4))
          if (acked.length === count) child.kill('SIGKILL')
        }
      }
    })
    child.on('exit', (_code, signal) => {
      clearTimeout(timer)
      if (acked.length < count) reject(new Error(`writer exited early (${signal}); stderr: ${stderr}`))
      else resolve({ acked, signal })
    })
  })
}

describe('restart after SIGKILL', () => {
  it('every submission acknowledged before the kill is delivered exactly once by a new dispatcher', async () => {
    const dir = await tempDir('crash-')
    cleanups.push(dir.cleanup)
    const dataDir = join(dir.path, 'data')

    const { acked, signal } = await ackThenKill(dataDir, ACKS_BEFORE_KILL)
    expect(signal).toBe('SIGKILL')
    expect(acked.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL)
    expect(new Set(acked).size).toBe(acked.length)

    const store = new OutboxStore(dataDir)
    await store.open() // the dead process's LevelDB lock is gone with it
    cleanups.push(() => store.close())
    const undelivered = await store.listUndelivered()
    const stored = new Set(undelivered.map((s) => s.record.hash))
    for (const hash of acked) expect(stored.has(hash as `0x${string}`)).toBe(true)
    console.info(`writer acknowledged ${acked.length}; ${undelivered.length} were stored when it was killed`)

    const relay = await startRelay()
    cleanups.push(() => relay.close())
    const heads = new ManualHeads(500n)
    const inclusion = new ManualInclusion()
    const dispatcher = new Dispatcher({
      store,
      relays: [new RelayClient({ name: 'recording', url: relay.url }, SearcherKey.fromHex(SEARCHER_KEY_HEX))],
      heads,
      inclusion,
      planner: new FixedPlanner('none'),
      simulate: simulator(),
      decode: { chainId: CHAIN_ID },
    })
    cleanups.push(() => dispatcher.stop())
    await dispatcher.start()
    await dispatcher.whenIdle()

    // one request per stored submission (acknowledged ones, plus any the writer stored after its last ACK)
    expect(relay.requests).toHaveLength(undelivered.length)
    const rawToHash = new Map(undelivered.map((s) => [s.record.rawTxs[0], s.record.hash]))
    const deliveries = new Map<string, number>()
    for (const req of relay.requests) {
      expect(req.params.blockNumber).toBe('0x1f5')
      const [raw] = sentTxs(req)
      const hash = rawToHash.get(raw as `0x${string}`)
      expect(hash).toBeDefined()
      deliveries.set(hash as string, (deliveries.get(hash as string) ?? 0) + 1)
    }
    for (const hash of acked) expect(deliveries.get(hash)).toBe(1)

    // all land in the next block: they finish, and nothing is sent again
    for (const s of undelivered) inclusion.include(s.record.hash, 501n)
    heads.emit(501n)
    await dispatcher.whenIdle()
    expect(relay.requests).toHaveLength(undelivered.length)
    expect(await store.listUndelivered()).toEqual([])
    for (const s of undelivered) {
      expect(summarizeLifecycle((await store.get(s.record.id))?.events ?? []).outcome).toMatchObject({ type: 'included', block: 501n })
    }
  })
})
