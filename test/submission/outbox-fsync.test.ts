/**
 * The outbox's durability promise: every write is fsynced (`{ sync: true }`) before the caller's
 * promise resolves. The crash tests SIGKILL the process, and the page cache survives that, so they
 * would still pass with fsync removed. Here LevelDB is wrapped so each write's options are recorded
 * and each write can be held back: no write may go out without sync, and persist() / append() may
 * not resolve before the write carrying their keys has completed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

interface WriteRecord {
  kind: 'put' | 'batch'
  sync: boolean | undefined
  keys: string[]
  done: boolean
}

const recorder = vi.hoisted(() => ({
  writes: [] as WriteRecord[],
  /** while set, every write waits for it before reaching LevelDB */
  gate: undefined as Promise<void> | undefined,
}))

vi.mock('classic-level', async (importOriginal) => {
  const original = await importOriginal<typeof import('classic-level')>()
  class RecordingLevel<K, V> extends original.ClassicLevel<K, V> {
    // only the forms the outbox uses: put(key, value, options) and batch(ops[], options)
    override put(key: K, value: V, options?: unknown): Promise<void> {
      const write: WriteRecord = { kind: 'put', sync: (options as { sync?: boolean } | undefined)?.sync, keys: [String(key)], done: false }
      recorder.writes.push(write)
      return (recorder.gate ?? Promise.resolve())
        .then(() => (super.put as (k: K, v: V, o?: unknown) => Promise<void>)(key, value, options))
        .then(() => void (write.done = true))
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override batch(ops?: any, options?: any): any {
      if (!Array.isArray(ops)) return (super.batch as () => unknown)()
      const write: WriteRecord = { kind: 'batch', sync: (options as { sync?: boolean } | undefined)?.sync, keys: ops.map((o: { key: unknown }) => String(o.key)), done: false }
      recorder.writes.push(write)
      return (recorder.gate ?? Promise.resolve())
        .then(() => (super.batch as (o: unknown, p: unknown) => Promise<void>)(ops, options))
        .then(() => void (write.done = true))
    }
  }
  return { ...original, ClassicLevel: RecordingLevel }
})

const { OutboxStore } = await import('../../src/submission/index.ts')
const { tempDir, userTx } = await import('./helpers.ts')

let dir: { path: string; cleanup: () => Promise<void> }
beforeEach(async () => {
  dir = await tempDir('outbox-fsync-')
  recorder.writes.length = 0
  recorder.gate = undefined
})
afterEach(async () => {
  recorder.gate = undefined
  await dir.cleanup()
})

describe('outbox fsync', () => {
  it('every write is synced, and persist/append resolve only after their own write completed', async () => {
    const store = new OutboxStore(`${dir.path}/data`)
    await store.open()
    expect(recorder.writes.length).toBeGreaterThan(0) // the boot counter

    // hold the next writes back: persist() must still be pending while its write is not done
    let release!: () => void
    recorder.gate = new Promise<void>((r) => (release = r))
    let acknowledged = false
    const persisted = store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0) }).then((r) => {
      acknowledged = true
      return r
    })
    await new Promise((r) => setTimeout(r, 50))
    const write = recorder.writes.find((w) => w.keys.some((k) => k.startsWith('s!')))
    expect(write).toBeDefined()
    expect(acknowledged).toBe(false)
    release()
    const { record } = await persisted
    expect(write!.done).toBe(true)
    expect(write!.keys).toContain(`s!${record.id}`)

    recorder.gate = new Promise<void>((r) => (release = r))
    let appended = false
    const appending = store.append(record.id, [{ type: 'included', at: Date.now(), block: 5n }]).then(() => void (appended = true))
    await new Promise((r) => setTimeout(r, 50))
    expect(appended).toBe(false)
    release()
    await appending
    await store.close()

    // nothing was ever written without fsync
    expect(recorder.writes.length).toBeGreaterThanOrEqual(3)
    expect(recorder.writes.filter((w) => w.sync !== true)).toEqual([])
    expect(recorder.writes.every((w) => w.done)).toBe(true)
  })

  it('group commit: concurrent submissions share synced batches and each waits for its own', async () => {
    const store = new OutboxStore(`${dir.path}/data`)
    await store.open()
    recorder.writes.length = 0
    const raws = await Promise.all(Array.from({ length: 20 }, (_, i) => userTx(i)))
    const results = await Promise.all(raws.map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx })))
    await store.close()
    expect(results.every((r) => r.created)).toBe(true)
    expect(recorder.writes.length).toBeGreaterThan(0)
    expect(recorder.writes.filter((w) => w.sync !== true)).toEqual([])
    // every record's key went out in a synced write
    const written = new Set(recorder.writes.flatMap((w) => w.keys))
    for (const r of results) expect(written.has(`s!${r.record.id}`)).toBe(true)
  })
})
