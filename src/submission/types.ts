/**
 * The data of private submission: what a partner submitted (a {@link SubmissionRecord}, immutable
 * once acknowledged) and what happened to it since (an append-only list of {@link LifecycleEvent}s).
 *
 * Lifecycle (spec section 3 leaves it open; this is ours):
 *
 * ```
 * received ─► simulated (success, or revert reason / simulation error)
 *          ─► backrun (raw tx, profit) | no-backrun (reason)
 *          ─► targeting (first..last block, relays)
 *          ─► per relay and block: relay-sending (attempt id, bundles) ─► relay-result (ok, attempts, last error)
 *          ─► at every new head, per block and bundle: bundle-outcome (included, outbid, invalid and why,
 *             where the relay tells), then simulated and backrun | no-backrun again for the next block
 *             (re-planned on the new state)
 *             ... repeated for every following block ...
 *          ─► included (block N) | expired (last block) | dropped (reason)      <- terminal
 *          ─► reorg (block N replaced): open again, re-planned and sent from the new head on
 *             ... then included | expired | dropped again
 * ```
 *
 * A 'notify' submission is never dispatched by us: if no backrun is found it ends as `dropped`.
 * All amounts and block numbers are bigint; times (`at`, `receivedAt`) are milliseconds since the
 * Unix epoch.
 */
import type { Address, Hex } from '../chain/types.ts'

/**
 * - `private-tx`: one raw signed tx we must deliver (eth_sendPrivateRawTransaction)
 * - `bundle`: ordered raw signed txs we must deliver atomically (eth_sendBundle)
 * - `notify`: a raw tx the partner dispatches itself; only our backrun bundle references it by
 *   hash (eth_notifyRawTransaction). No delivery commitment.
 */
export type SubmissionKind = 'private-tx' | 'bundle' | 'notify'

export const SUBMISSION_KINDS: readonly SubmissionKind[] = ['private-tx', 'bundle', 'notify']

/**
 * `<kind>:<hash>`. The kind is part of the identity: notifying a tx and later sending the same tx
 * privately are two intents (the second carries a delivery commitment), so they are two records.
 */
export type SubmissionId = `${SubmissionKind}:${Hex}`

/** Flashbots eth_sendBundle options a partner may give with a bundle (all optional). */
export interface BundleOptions {
  /** The only block the bundle is valid for. Without it we target every block until expiry. */
  blockNumber?: bigint
  /** Unix seconds. */
  minTimestamp?: bigint
  /** Unix seconds; the bundle expires once a head at or after this time is seen. */
  maxTimestamp?: bigint
  /** Hashes of the partner's txs that may revert without invalidating the bundle. */
  revertingTxHashes?: Hex[]
  /** Passed through to relays unchanged. */
  replacementUuid?: string
}

/** What the RPC layer hands to the store. Raw txs must already have passed decodeSignedTransaction. */
export type NewSubmission =
  | { kind: 'private-tx'; partnerId: string; rawTx: Hex }
  | { kind: 'notify'; partnerId: string; rawTx: Hex }
  | { kind: 'bundle'; partnerId: string; rawTxs: readonly Hex[]; options?: BundleOptions }

/** An acknowledged submission. Never changes after it is written. */
export interface SubmissionRecord {
  id: SubmissionId
  kind: SubmissionKind
  /** What the RPC method returns: the tx hash, or for a bundle the bundle hash (spec 4.2). */
  hash: Hex
  /** The partner that submitted it first; only this partner may read it. */
  partnerId: string
  /** ms since epoch */
  receivedAt: number
  /** Lowercase hex of the exact bytes received, in order. Forwarded as they are. */
  rawTxs: Hex[]
  /** keccak256 of each raw tx, same order. */
  txHashes: Hex[]
  /** Only for kind 'bundle'. */
  bundleOptions?: BundleOptions
}

export interface ReceivedEvent {
  type: 'received'
  at: number
}

/** why a user tx could not be included at all on a head (it was not executed) */
export type SimulationRejection = 'nonce-used' | 'nonce-gap' | 'funds' | 'fee' | 'other'

export interface SimulatedEvent {
  type: 'simulated'
  at: number
  /** false when a user tx reverted, or when the simulation could not be run (`error`) */
  success: boolean
  revertReason?: string
  /** index in rawTxs of the tx that reverted */
  failedTxIndex?: number
  /** the failing tx could not be included at all: nonce-used | nonce-gap | funds | fee | other */
  rejection?: SimulationRejection
  gasUsed?: bigint
  /** the block the simulation's state was pinned to */
  blockNumber?: bigint
  /** the simulation itself failed (timeout, upstream error); the submission is still forwarded */
  error?: string
}

export interface BackrunEvent {
  type: 'backrun'
  at: number
  rawTx: Hex
  txHash: Hex
  grossProfit: bigint
  profitToken: Address
  netProfitWei?: bigint
  gasUsed?: bigint
  /** the block it was planned and signed for (absent in records written before per-block planning) */
  block?: bigint
  /** the searcher account that signed it */
  searcher?: Address
}

export interface NoBackrunEvent {
  type: 'no-backrun'
  at: number
  reason: string
  /** the block this decision was made for */
  block?: bigint
}

/**
 * - `user`: the user's txs alone (the partner's bundle as submitted), sent first for every block,
 *   so the user's inclusion never waits for or depends on a backrun
 * - `backrun`: the user's txs followed by our backrun (atomic), sent beside it once planned; the
 *   builder keeps at most one of the two (they share the user's txs) and prefers the one that pays
 */
export type BundleRole = 'user' | 'backrun'

/** What a relay said became of one of our bundles for one block (where it tells: flashbots_getBundleStatsV2). */
export interface BundleOutcomeEvent {
  type: 'bundle-outcome'
  at: number
  relay: string
  block: bigint
  role: BundleRole
  bundleHash: Hex
  /** included | outbid | invalid | expired | pending | unknown */
  status: string
  reason?: string
}

/** Written once, with the first send: the block range the submission is sent for. */
export interface TargetingEvent {
  type: 'targeting'
  at: number
  firstBlock: bigint
  lastBlock: bigint
  /** relays the submission is eligible for */
  relays: string[]
}

/** Written (fsynced) BEFORE the bundle for `block` is sent to `relay`. */
export interface RelaySendingEvent {
  type: 'relay-sending'
  at: number
  relay: string
  block: bigint
  attemptId: string
  /** which bundle this send carries (absent in older records: one bundle with both) */
  part?: BundleRole
  /** the bundle's hash (absent in older records) */
  bundleHash?: Hex
}

/** The outcome of the send announced by the `relay-sending` event with the same attempt id. */
export interface RelayResultEvent {
  type: 'relay-result'
  at: number
  relay: string
  block: bigint
  attemptId: string
  /** as in its relay-sending event */
  part?: BundleRole
  ok: boolean
  /** HTTP requests made, retries included */
  attempts: number
  lastError?: string
  /** the bundle hash the relay answered with, if any */
  relayBundleHash?: string
}

export interface IncludedEvent {
  type: 'included'
  at: number
  block: bigint
  /** whether our backrun landed too, when the inclusion checker knows */
  backrunIncluded?: boolean
  /** the backrun that landed with it */
  backrunTxHash?: Hex
  /** the gross profit it realized on chain (its receipt's Backrun event) */
  backrunGrossProfit?: bigint
}

export interface ExpiredEvent {
  type: 'expired'
  at: number
  lastBlock: bigint
  reason: string
}

export interface DroppedEvent {
  type: 'dropped'
  at: number
  reason: string
}

export type TerminalEvent = IncludedEvent | ExpiredEvent | DroppedEvent

/**
 * The chain replaced blocks the submission was sent for or included in. What was sent for a
 * replaced block is sent again (planned on the new head), and an inclusion in a replaced block is
 * undone: the submission is open again and dispatched as before (`includedBlock`).
 */
export interface ReorgEvent {
  type: 'reorg'
  at: number
  /** the newest block both chains share; absent when the reorg is deeper than the source looks (every block is taken as replaced) */
  commonAncestor?: bigint
  /** the replaced blocks, oldest first */
  dropped: bigint[]
  /** the head adopted in their place */
  newHead: bigint
  /** the block of the inclusion this reorg undid (the submission is open again) */
  includedBlock?: bigint
}

export type LifecycleEvent =
  | ReceivedEvent
  | SimulatedEvent
  | BackrunEvent
  | NoBackrunEvent
  | TargetingEvent
  | RelaySendingEvent
  | RelayResultEvent
  | BundleOutcomeEvent
  | ReorgEvent
  | TerminalEvent

export function isTerminalEvent(event: LifecycleEvent): event is TerminalEvent {
  return event.type === 'included' || event.type === 'expired' || event.type === 'dropped'
}

/** A submission with its lifecycle, oldest event first. */
export interface StoredSubmission {
  record: SubmissionRecord
  events: LifecycleEvent[]
}

export function submissionId(kind: SubmissionKind, hash: Hex): SubmissionId {
  return `${kind}:${hash.toLowerCase() as Hex}`
}

/** What the RPC methods' decode of a submission's transactions told, handed to Dispatcher.accept so it does not read it again. */
export interface DecodedFacts {
  /** the highest tip cap (maxPriorityFeePerGas; gasPrice for legacy and EIP-2930) among its transactions */
  tipCap: bigint
}
