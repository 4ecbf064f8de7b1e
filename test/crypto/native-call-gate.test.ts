/**
 * native-call-gate.ts with real threads: closing a worker's gate waits for the call inside native
 * code to leave; after it the thread never enters again (it parks until its terminate, which stops
 * it at once); a call that does not leave within the drain is reported; and the thread without a
 * gate (the main thread) calls straight through. The worker (support/native-call-gate-thread.mjs)
 * stands in for native calls with waits the test releases, so every step is decided, not raced.
 * (That a thread terminated inside a real node-addon-api call aborts the process is measured, not
 * tested here: the `secp256k1` binding did so in 3 of 4 runs of 200 terminations, at the 12th to
 * the 86th, 2026-11-28; the `keccak` binding at the first, 5 of 5. See thread-termination.e2e.test.ts.)
 */
import { Worker } from 'node:worker_threads'
import { afterEach, describe, expect, it } from 'vitest'
import { closeNativeCallGate, enterNativeCall, leaveNativeCall } from '../../src/crypto/native-call-gate.ts'
import { nativeSecp256k1 } from '../../src/crypto/native-secp256k1.ts'

const ENTERED = 0
const RELEASE = 1

interface GatedThread {
  worker: Worker
  cells: Int32Array
  gate: SharedArrayBuffer
}

let threads: Worker[] = []

afterEach(async () => {
  await Promise.all(threads.map((worker) => worker.terminate()))
  threads = []
})

async function startGatedThread(): Promise<GatedThread> {
  const cells = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT))
  const worker = new Worker(new URL('../support/native-call-gate-thread.mjs', import.meta.url), { workerData: { cells: cells.buffer } })
  threads.push(worker)
  const { gate } = await new Promise<{ gate: SharedArrayBuffer }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  return { worker, cells, gate }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** until the thread has entered `count` calls in all (it is then inside its count-th) */
async function entered(cells: Int32Array, count: number): Promise<void> {
  const deadline = performance.now() + 10_000
  while (Atomics.load(cells, ENTERED) < count) {
    if (performance.now() > deadline) throw new Error(`the thread did not enter call ${count}`)
    await sleep(2)
  }
}

function release(cells: Int32Array): void {
  Atomics.store(cells, RELEASE, 1)
  Atomics.notify(cells, RELEASE)
}

describe('the native-call gate', () => {
  it('closing waits for the call inside to leave, then the thread never enters again and a terminate stops it', async () => {
    const { worker, cells, gate } = await startGatedThread()
    await entered(cells, 1)
    let drained: boolean | undefined
    const closing = closeNativeCallGate(gate, 10_000).then((value) => (drained = value))
    await sleep(150)
    expect(drained, 'resolved while a call was inside').toBeUndefined()

    release(cells)
    await closing
    expect(drained).toBe(true)
    // the thread left its call and went for the next one: the closed gate holds it outside
    await sleep(150)
    expect(Atomics.load(cells, ENTERED)).toBe(1)

    const started = performance.now()
    const code = await worker.terminate()
    expect(code).toBe(1)
    expect(performance.now() - started).toBeLessThan(2_000)
  }, 30_000)

  it('a gate closed while the thread is between calls holds its next call outside', async () => {
    const { cells, gate } = await startGatedThread()
    await entered(cells, 1)
    release(cells)
    await entered(cells, 2)
    release(cells)
    // the thread is on its way to call 3 or inside it: the close sees which, and waits if inside
    const closing = closeNativeCallGate(gate, 10_000)
    release(cells)
    expect(await closing).toBe(true)
    const after = Atomics.load(cells, ENTERED)
    release(cells)
    await sleep(150)
    expect(Atomics.load(cells, ENTERED)).toBe(after)
  }, 30_000)

  it('reports a call still inside after the drain', async () => {
    const { cells, gate } = await startGatedThread()
    await entered(cells, 1)
    const started = performance.now()
    expect(await closeNativeCallGate(gate, 200)).toBe(false)
    expect(performance.now() - started).toBeGreaterThanOrEqual(190)
  }, 30_000)

  it('lets the main thread, which has no gate, call straight through', () => {
    enterNativeCall()
    leaveNativeCall()
    const message = new Uint8Array(32).fill(7)
    expect(nativeSecp256k1).toBeDefined()
    const { signature, recid } = nativeSecp256k1!.ecdsaSign(message, new Uint8Array(32).fill(1))
    expect(nativeSecp256k1!.ecdsaRecover(signature, recid, message, false).length).toBe(65)
  })
})
