/**
 * A dispatcher whose pass over its open submissions takes longer than a block (issue 10; the
 * replicas' kill test on a loaded machine, BENCHMARKS "h16-pg"): every simulation holds the main
 * thread (as WORKERS=0 does), and the builder builds a block on its own clock and refuses a bundle
 * for a block it has built, as the local builder does. Every submission must still land: a step
 * that has read its head sends within a few turns (not after every other submission's step), and
 * aims at the newest head it knows when it sends.
 *
 * Broken on purpose: at the branch point (one FIFO of turns, so a step's simulation and send wait
 * behind every other submission's step start; no head read before the send) the first test fails
 * with 0 of 40 included and 280 sends refused; with the send's head check removed the second fails
 * (0 of 1, 30 refused). The lanes alone are tested in dispatcher/event-loop-turns.test.ts.
 */
import { join } from 'node:path'

import { keccak256, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'

import { Dispatcher, OutboxStore, RelayClient, SearcherKey, type SubmissionId, type SubmissionSimulator } from '../../src/submission/index.ts'
import { CHAIN_ID, FixedPlanner, ManualHeads, ManualInclusion, SEARCHER_KEY_HEX, startRelay, dirPerTest, userTx } from './helpers.ts'

const SUBMISSIONS = 40
/** one simulation's hold on the main thread, ms: a pass over every submission is ~2 blocks */
const SIMULATION_MS = 8
const BLOCK_MS = 150
/** blocks the builder builds before the test gives up (a submission expires after 50) */
const BLOCKS = 30

const dir = dirPerTest('dispatch-catch-up-')
const cleanups = dir.cleanups

/** holds this thread for `ms`, as a simulation on the main thread does */
function busy(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // spin
  }
}

/**
 * A builder on its own clock: every `BLOCK_MS` it builds the next block from the bundles it holds
 * for it (their user txs land), then tells the dispatcher's head source. A bundle for a block it has
 * built is refused with the local builder's words (src/devnet/local-builder.ts).
 */
class ClockedBuilder {
  head = 100n
  readonly bundles = new Map<bigint, Set<Hex>>()
  refused = 0
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly heads: ManualHeads,
    private readonly inclusion: ManualInclusion,
  ) {}

  refuse = (method: string | undefined, params: Record<string, unknown>): { code: number; message: string } | undefined => {
    if (method !== 'eth_sendBundle') return undefined
    const block = BigInt(params.blockNumber as string)
    if (block <= this.head) {
      this.refused++
      return { code: -32602, message: `blockNumber ${params.blockNumber as string} is not in the future: the head is ${this.head}, the next block is ${this.head + 1n}` }
    }
    const txs = params.txs as Hex[]
    let held = this.bundles.get(block)
    if (held === undefined) this.bundles.set(block, (held = new Set()))
    held.add(keccak256(txs[0]))
    return undefined
  }

  start(blocks: number): Promise<void> {
    return new Promise((resolve) => {
      let built = 0
      const build = (): void => {
        const block = this.head + 1n
        for (const hash of this.bundles.get(block) ?? []) if (!this.inclusion.included.has(hash)) this.inclusion.include(hash, block)
        this.bundles.delete(block)
        this.head = block
        this.heads.emit(block)
        if (++built >= blocks) {
          this.timer = undefined
          resolve()
          return
        }
        this.timer = setTimeout(build, BLOCK_MS)
      }
      this.timer = setTimeout(build, BLOCK_MS)
    })
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
  }
}

/**
 * `submissions` accepted at once while the builder runs; each simulation holds the main thread for
 * `simulationMs`. How many are included by the builder's last block, and how many sends it refused.
 */
async function landWhileBehind(submissions: number, simulationMs: number): Promise<{ included: number; refused: number }> {
  const store = new OutboxStore(join(dir.path, 'data'), { writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 2 } })
  await store.open()
  cleanups.push(() => store.close())
  const heads = new ManualHeads(100n)
  const inclusion = new ManualInclusion()
  const builder = new ClockedBuilder(heads, inclusion)
  cleanups.push(async () => builder.stop())
  const relay = await startRelay({ refuse: builder.refuse })
  cleanups.push(() => relay.close())
  const simulate: SubmissionSimulator = async () => {
    busy(simulationMs)
    return { success: true, gasUsed: 21_000n }
  }
  const dispatcher = new Dispatcher({
    store,
    relays: [new RelayClient({ name: 'builder', url: relay.url, maxAttempts: 1 }, SearcherKey.fromHex(SEARCHER_KEY_HEX), { random: () => 1 })],
    heads,
    inclusion,
    planner: new FixedPlanner('none'),
    simulate,
    decode: { chainId: CHAIN_ID },
    expiryBlocks: 50,
  })
  cleanups.push(() => dispatcher.stop())
  await dispatcher.start()
  const raws = await Promise.all(Array.from({ length: submissions }, (_, i) => userTx(i)))

  // the chain runs on its own clock; the submissions arrive at once, while it does
  const building = builder.start(BLOCKS)
  const ids: SubmissionId[] = (await Promise.all(raws.map((rawTx) => dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })))).map((r) => r.record.id)
  const landed = async (): Promise<number> => {
    let n = 0
    for (const id of ids) if ((await store.get(id))?.events.some((e) => e.type === 'included')) n++
    return n
  }
  // every one included, or the builder's blocks run out
  let done = false
  void building.then(() => (done = true))
  while (!done && (await landed()) < submissions) await new Promise((r) => setTimeout(r, 50))
  return { included: await landed(), refused: builder.refused }
}

describe('Dispatcher: a pass over the open submissions longer than a block', () => {
  it('every submission lands: a step that read its head sends within a few turns, not behind every other step', async () => {
    const { included, refused } = await landWhileBehind(SUBMISSIONS, SIMULATION_MS)
    expect(included, `${included} of ${SUBMISSIONS} included in ${BLOCKS} blocks; ${refused} sends refused for a built block`).toBe(SUBMISSIONS)
  }, 30_000)

  it('a simulation longer than a block: the send, built meanwhile, goes out for the block after the newest head', async () => {
    const { included, refused } = await landWhileBehind(1, BLOCK_MS + 50)
    expect(included, `${included} of 1 included in ${BLOCKS} blocks; ${refused} sends refused for a built block`).toBe(1)
    expect(refused).toBe(0)
  }, 30_000)
})
