import { describe, expect, it } from 'vitest'

import { reorgEvent, resetForReorg, touchedByReorg } from '../../../src/submission/dispatcher/reorg.ts'
import { newTask, type Task } from '../../../src/submission/dispatcher/task.ts'
import { isFinished, summarizeLifecycle } from '../../../src/submission/lifecycle.ts'
import type { LifecycleEvent, ReorgEvent } from '../../../src/submission/types.ts'

function task(n: number, events: LifecycleEvent[] = [{ type: 'received', at: 0 }]): Task {
  const hash = `0x${n.toString(16).padStart(64, '0')}` as const
  return newTask({ record: { id: `private-tx:${hash}`, kind: 'private-tx', hash, partnerId: 'p', receivedAt: 0, rawTxs: [], txHashes: [hash] }, events })
}

const reorg = (commonAncestor: bigint | undefined, dropped: bigint[], newHead: bigint): ReorgEvent =>
  reorgEvent({ commonAncestor: commonAncestor === undefined ? undefined : { number: commonAncestor }, dropped: dropped.map((number) => ({ number })), newHead: { number: newHead, timestamp: 0n } }, 5)

describe('reorgEvent', () => {
  it('names the common ancestor, the replaced blocks and the new head; a reorg deeper than known has no ancestor', () => {
    expect(reorg(100n, [101n, 102n], 101n)).toEqual({ type: 'reorg', at: 5, commonAncestor: 100n, dropped: [101n, 102n], newHead: 101n })
    expect(reorg(undefined, [], 7n)).toEqual({ type: 'reorg', at: 5, dropped: [], newHead: 7n })
  })
})

describe('a reorg in the lifecycle', () => {
  const sent = (block: bigint): LifecycleEvent => ({ type: 'relay-sending', at: 1, relay: 'r@1', block, attemptId: `x${block}`, part: 'user' })

  it('forgets the sends for replaced blocks (they go out again) and keeps those below the ancestor', () => {
    const t = task(1, [{ type: 'received', at: 0 }, sent(101n), sent(102n)])
    expect(touchedByReorg(t, reorg(101n, [102n], 102n))).toBe(true)
    expect(touchedByReorg(t, reorg(102n, [103n], 103n))).toBe(false)
    const summary = summarizeLifecycle([{ type: 'received', at: 0 }, sent(101n), sent(102n), reorg(101n, [102n], 102n)])
    expect([...summary.sent]).toEqual(['r@1@101@user'])
  })

  it('an inclusion in a replaced block is undone only by a reorg that names it (includedBlock); isFinished follows', () => {
    const included: LifecycleEvent = { type: 'included', at: 2, block: 102n }
    const base: LifecycleEvent[] = [{ type: 'received', at: 0 }, { type: 'targeting', at: 1, firstBlock: 101n, lastBlock: 125n, relays: ['r'] }, included]
    expect(isFinished(base)).toBe(true)
    // an open submission's reorg event (no includedBlock) does not re-open a finished one
    expect(isFinished([...base, reorg(100n, [101n, 102n], 101n)])).toBe(true)
    const reopened = [...base, { ...reorg(100n, [101n, 102n], 101n), includedBlock: 102n }]
    expect(isFinished(reopened)).toBe(false)
    expect(summarizeLifecycle(reopened)).toMatchObject({ outcome: undefined, stage: 'dispatching' })
    expect(isFinished([...reopened, { type: 'included', at: 9, block: 102n }])).toBe(true)
  })

  it('resetForReorg: planned and checked again; a simulated submission stays a re-simulation; sends for replaced blocks are aborted', () => {
    const t = task(2)
    const aborted: bigint[] = []
    const send = (block: bigint) => {
      const controller = new AbortController()
      controller.signal.addEventListener('abort', () => aborted.push(block))
      return { block, controller, done: Promise.resolve() }
    }
    t.simulatedFor = 103n
    t.plannedFor = 103n
    t.lastCheckedHead = 102n
    t.inflight = new Map([['a@user', send(101n)], ['b@user', send(103n)]])
    resetForReorg(t, reorg(101n, [102n], 102n))
    expect(t).toMatchObject({ simulatedFor: 101n, plannedFor: undefined, lastCheckedHead: undefined })
    expect(aborted).toEqual([103n])
  })
})
