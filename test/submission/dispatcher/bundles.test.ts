import { keccak256 } from 'viem'
import { beforeAll, describe, expect, it } from 'vitest'

import type { Hex } from '../../../src/chain/types.ts'
import { backrunBundle, userBundle } from '../../../src/submission/dispatcher/bundles.ts'
import { summarizeLifecycle } from '../../../src/submission/lifecycle.ts'
import type { BackrunEvent, BundleOptions, LifecycleEvent, SubmissionKind, SubmissionRecord } from '../../../src/submission/types.ts'
import { bundleHash } from '../../../src/tx/bundle-hash.ts'
import { PROFIT_TOKEN, backrunTx, userTx } from '../helpers.ts'

let raws: Hex[]
let backrunRaw: Hex

beforeAll(async () => {
  raws = [await userTx(0), await userTx(1)]
  backrunRaw = await backrunTx(0)
})

function record(kind: SubmissionKind, rawTxs: Hex[], bundleOptions?: BundleOptions): SubmissionRecord {
  const txHashes = rawTxs.map((raw) => keccak256(raw))
  return {
    id: `${kind}:${kind === 'bundle' ? bundleHash(txHashes) : txHashes[0]}`,
    kind,
    hash: kind === 'bundle' ? bundleHash(txHashes) : txHashes[0],
    partnerId: 'p',
    receivedAt: 0,
    rawTxs,
    txHashes,
    ...(bundleOptions === undefined ? {} : { bundleOptions }),
  }
}

function backrunEvent(block: bigint): BackrunEvent {
  return { type: 'backrun', at: 1, rawTx: backrunRaw, txHash: keccak256(backrunRaw), grossProfit: 5n, profitToken: PROFIT_TOKEN, block }
}

describe('userBundle', () => {
  it('holds the user txs alone with the partner options, hashed as the bundle of the user tx hashes', () => {
    const r = record('bundle', raws, { minTimestamp: 10n, maxTimestamp: 20n, revertingTxHashes: [keccak256(raws[1])], replacementUuid: 'u-1' })
    const out = userBundle(r, 7n)
    expect(out.role).toBe('user')
    expect(out.hash).toBe(bundleHash(r.txHashes))
    expect(out.bundle).toEqual({
      entries: raws.map((tx) => ({ tx })),
      blockNumber: 7n,
      minTimestamp: 10n,
      maxTimestamp: 20n,
      revertingTxHashes: [keccak256(raws[1])],
      replacementUuid: 'u-1',
    })
  })

  it('leaves out the options the partner did not give', () => {
    expect(userBundle(record('private-tx', raws.slice(0, 1)), 3n).bundle).toEqual({ entries: [{ tx: raws[0] }], blockNumber: 3n })
  })
})

describe('backrunBundle', () => {
  it('is [user txs..., backrun] for the block the backrun was planned for, without the replacementUuid', () => {
    const r = record('bundle', raws, { replacementUuid: 'u-1', maxTimestamp: 20n })
    const pending: LifecycleEvent[] = [backrunEvent(9n)]
    const out = backrunBundle(r, summarizeLifecycle([]), 9n, pending, false)
    expect(out?.role).toBe('backrun')
    expect(out?.hash).toBe(bundleHash([...r.txHashes, keccak256(backrunRaw)]))
    expect(out?.bundle).toEqual({ entries: [...raws.map((tx) => ({ tx })), { tx: backrunRaw }], blockNumber: 9n, maxTimestamp: 20n })
  })

  it('puts the backrun in revertingTxHashes only when backruns may revert', () => {
    const r = record('private-tx', raws.slice(0, 1))
    expect(backrunBundle(r, summarizeLifecycle([]), 9n, [backrunEvent(9n)], false)?.bundle.revertingTxHashes).toBeUndefined()
    expect(backrunBundle(r, summarizeLifecycle([]), 9n, [backrunEvent(9n)], true)?.bundle.revertingTxHashes).toEqual([keccak256(backrunRaw)])
  })

  it('references a notified tx by hash', () => {
    const r = record('notify', raws.slice(0, 1))
    const out = backrunBundle(r, summarizeLifecycle([]), 9n, [backrunEvent(9n)], false)
    expect(out?.bundle).toEqual({ entries: [{ hash: r.txHashes[0] }, { tx: backrunRaw }], blockNumber: 9n })
  })

  it('is absent without a backrun for that block: none planned, planned for another block, or a later no-backrun', () => {
    const r = record('private-tx', raws.slice(0, 1))
    expect(backrunBundle(r, summarizeLifecycle([]), 9n, [], false)).toBeUndefined()
    expect(backrunBundle(r, summarizeLifecycle([]), 9n, [backrunEvent(8n)], false)).toBeUndefined()
    expect(backrunBundle(r, summarizeLifecycle([]), 9n, [backrunEvent(9n), { type: 'no-backrun', at: 2, reason: 'gone', block: 9n }], false)).toBeUndefined()
  })

  it("falls back to the summary's backrun when nothing new was decided", () => {
    const r = record('private-tx', raws.slice(0, 1))
    const summary = summarizeLifecycle([{ type: 'received', at: 0 }, backrunEvent(9n)])
    expect(backrunBundle(r, summary, 9n, [], false)?.role).toBe('backrun')
  })
})
