/**
 * What a worker's state source keeps alive (issue 10: RSS flat under the soak with the worker pool).
 * Heap snapshots of a worker under bench:soak showed two causes of a live heap that grew for five
 * minutes, both fixed here and held by these tests:
 * - every block's reader preallocated its L1 for 50,000 keys (lru-cache allocates its arrays for
 *   `max` up front: ~1.4 MB a reader);
 * - promises created during a task, kept by caches beyond it, kept that task's reader alive through
 *   the async-context store Node stamps on them, and through its L1 the readers before it.
 */
import { MessageChannel } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { BlockInfo, Hex } from '../../src/chain/types.ts'
import { L1_BLOCKS, RemoteChainSource } from '../../src/workers/remote-chain-source.ts'
import { createCodeInterner, RemoteStateReader } from '../../src/workers/remote-state-reader.ts'
import { StateRequester } from '../../src/workers/state-requester.ts'
import { collectGarbage as collect } from '../support/collect-garbage.ts'

function block(n: number): BlockInfo {
  const hash = `0x${n.toString(16).padStart(64, '0')}` as Hex
  return { number: BigInt(n), hash, parentHash: `0x${(n - 1).toString(16).padStart(64, '0')}` as Hex, timestamp: BigInt(n * 12), baseFeePerGas: 1n, gasLimit: 30_000_000n, coinbase: `0x${'00'.repeat(20)}` } as BlockInfo
}

let channel: MessageChannel
let requester: StateRequester
let remote: RemoteChainSource

beforeEach(() => {
  channel = new MessageChannel()
  remote = new RemoteChainSource({ kind: 'devnet', chainId: 31337n, head: block(1) })
  requester = new StateRequester(channel.port2, (b) => remote.adoptHead(b))
  remote.connect(requester)
})

afterEach(async () => {
  await remote.close()
  channel.port1.close()
})

describe("a worker's state source", () => {
  it('allocates no L1 up front: 100 readers hold well under a megabyte each', async () => {
    await collect()
    const before = process.memoryUsage().heapUsed
    const readers = Array.from({ length: 100 }, (_, i) => new RemoteStateReader(block(i + 2), requester, createCodeInterner(1024)))
    await collect()
    const perReader = (process.memoryUsage().heapUsed - before) / readers.length
    // preallocated for 50,000 keys this was ~1.4 MB a reader
    expect(perReader).toBeLessThan(64 * 1024)
  })

  it("does not keep a finished task's reader alive through the promises the task left in caches", async () => {
    const kept: Promise<unknown>[] = []
    let ref: WeakRef<object> | undefined
    await remote.runAt(block(2), async () => {
      ref = new WeakRef(remote.latest())
      // as the backrun engine's ETH/USD cache does: a promise created in the task, kept after it
      kept.push(Promise.resolve(1), new Promise((resolve) => setTimeout(resolve, 0)))
      await kept[1]
    })
    // later blocks push block 2's reader out of the kept readers
    for (let n = 3; n <= 3 + L1_BLOCKS; n++) await remote.runAt(block(n), async () => remote.latest())
    await collect()
    expect(kept).toHaveLength(2)
    expect(ref?.deref()).toBeUndefined()
  })

  it('answers the pinned block for the whole task and the newest head once it has ended', async () => {
    let late: Promise<string> | undefined
    const seen = await remote.runAt(block(5), async () => {
      remote.adoptHead(block(6))
      late = new Promise<void>((resolve) => setTimeout(resolve, 10)).then(() => remote.latest().block.hash)
      return remote.latest().block.hash
    })
    expect(seen).toBe(block(5).hash)
    // work the task left running sees the newest head, as outside a task
    expect(await late).toBe(block(6).hash)
  })
})
