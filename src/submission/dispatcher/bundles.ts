/**
 * The two bundles sent for a block: the user's own `[user txs...]`, and the backrun bundle
 * `[user txs..., backrun]` beside it once planned, so the user's inclusion never waits for, nor
 * depends on, the backrun.
 */
import type { Hex } from '../../chain/types.ts'
import { bundleHash as computeBundleHash } from '../../tx/bundle-hash.ts'
import type { LifecycleSummary } from '../lifecycle.ts'
import type { RelayBundle, RelayBundleEntry } from '../relay-client.ts'
import type { BackrunEvent, BundleRole, LifecycleEvent, NoBackrunEvent, SubmissionRecord } from '../types.ts'

export interface OutgoingBundle {
  role: BundleRole
  hash: Hex
  bundle: RelayBundle
}

/**
 * The user's own bundle for `block`: the user txs alone, with the partner's options. Sent first
 * every block, so the user's inclusion never waits for (or depends on) a backrun.
 */
export function userBundle(record: SubmissionRecord, block: bigint): OutgoingBundle {
  const options = record.bundleOptions ?? {}
  const reverting = options.revertingTxHashes ?? []
  return {
    role: 'user',
    hash: computeBundleHash(record.txHashes),
    bundle: {
      entries: record.rawTxs.map((tx): RelayBundleEntry => ({ tx })),
      blockNumber: block,
      ...timing(record),
      ...(reverting.length === 0 ? {} : { revertingTxHashes: [...reverting] }),
      ...(options.replacementUuid === undefined ? {} : { replacementUuid: options.replacementUuid }),
    },
  }
}

/**
 * The backrun bundle for `block`, when a backrun was planned for it (the latest `backrun` or
 * `no-backrun` in `pending`, else in `summary`): `[user txs..., backrun]`.
 * It shares the user's txs with the user's own bundle, so a builder includes at most one of the
 * two: the backrun bundle pays more and wins when it is valid; when it is not (the backrun would
 * revert after another bundle took or moved its profit, its nonce went stale), the user's own
 * bundle still lands. The backrun is therefore not in revertingTxHashes (unless
 * `backrunMayRevert`): a backrun that would revert fails its bundle instead of costing the
 * searcher gas. A notify submission's backrun bundle references the tx by hash. The partner's
 * replacementUuid stays on its own bundle (a second bundle with the same uuid would replace it).
 */
export function backrunBundle(
  record: SubmissionRecord,
  summary: LifecycleSummary,
  block: bigint,
  pending: readonly LifecycleEvent[],
  backrunMayRevert: boolean,
): OutgoingBundle | undefined {
  const decided = [...pending].reverse().find((e): e is BackrunEvent | NoBackrunEvent => e.type === 'backrun' || e.type === 'no-backrun')
  const latest = decided ?? (summary.backrun === null ? undefined : summary.backrun)
  if (latest === undefined || latest.type !== 'backrun' || (latest.block !== undefined && latest.block !== block)) return undefined
  const backrun = latest
  if (record.kind === 'notify') {
    return {
      role: 'backrun',
      hash: computeBundleHash([record.txHashes[0], backrun.txHash]),
      bundle: { entries: [{ hash: record.txHashes[0] }, { tx: backrun.rawTx }], blockNumber: block },
    }
  }
  const reverting = [...(record.bundleOptions?.revertingTxHashes ?? []), ...(backrunMayRevert ? [backrun.txHash] : [])]
  return {
    role: 'backrun',
    hash: computeBundleHash([...record.txHashes, backrun.txHash]),
    bundle: {
      entries: [...record.rawTxs.map((tx): RelayBundleEntry => ({ tx })), { tx: backrun.rawTx }],
      blockNumber: block,
      ...timing(record),
      ...(reverting.length === 0 ? {} : { revertingTxHashes: reverting }),
    },
  }
}

function timing(record: SubmissionRecord): { minTimestamp?: bigint; maxTimestamp?: bigint } {
  const options = record.bundleOptions ?? {}
  return {
    ...(options.minTimestamp === undefined ? {} : { minTimestamp: options.minTimestamp }),
    ...(options.maxTimestamp === undefined ? {} : { maxTimestamp: options.maxTimestamp }),
  }
}
