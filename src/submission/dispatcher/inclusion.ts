/**
 * Inclusion and expiry: whether a submission's txs are on chain, and when it can no longer be
 * sent. Each new block's tx hashes are read once (BlockTxIndex, when the inclusion checker can
 * read blocks) and receipts are asked only for the submissions found there, so the per-head cost
 * does not grow with the number of open submissions.
 */
import { errorText } from '../../primitives/error-text.ts'
import { BlockTxIndex } from '../block-tx-index.ts'
import type { HeadInfo, InclusionChecker, InclusionStatus } from '../dispatcher-ports.ts'
import type { Limiter } from '../limiter.ts'
import type { BundleRelay } from '../relay-client.ts'
import type { IncludedEvent, SubmissionRecord, TargetingEvent } from '../types.ts'
import { headMoved, type DispatchContext } from './context.ts'
import type { Task } from './task.ts'

export class InclusionWatch {
  /** each new block's tx hashes, from the head or read once per head */
  private readonly blockIndex: BlockTxIndex
  /** the index being brought up to the current head */
  private indexed: { head: bigint; ready: Promise<void> } | undefined

  constructor(
    private readonly ctx: DispatchContext,
    private readonly checker: InclusionChecker,
    /** inclusion checks running at the same time (shared with the relays' bundle-stats questions) */
    private readonly limit: Limiter,
    expiryBlocks: bigint,
    /** hashes the block index holds at most (allocated up front) */
    maxHashes: number,
  ) {
    this.blockIndex = new BlockTxIndex({
      // a checker that cannot read blocks leaves the heads that came without hashes as gaps
      read: (n) => checker.blockTransactions?.(n) ?? Promise.resolve(null),
      // a submission's whole life (and the block before its first, where a notified tx sent by
      // the partner itself may land) fits in the window
      windowBlocks: Number(expiryBlocks) + 2,
      maxHashes,
      onError: (block, err) => ctx.log.warn({ block: block.toString(), err: errorText(err) }, 'reading a block for the inclusion index failed; its submissions are checked by receipt'),
    })
  }

  /**
   * A reorg replaced the blocks above `floor` (-1n: all): the index forgets them (they are read
   * again as gaps) before the new head is indexed.
   */
  onReorg(floor: bigint): void {
    this.indexed = undefined
    void this.blockIndex.dropAbove(floor)
  }

  /** Starts indexing `head`'s txs (read from the node when the head came without them). */
  onHead(head: HeadInfo): void {
    this.indexed = { head: head.number, ready: this.blockIndex.advance(head.number, head.transactionHashes) }
  }

  /**
   * Whether `task`'s txs are on chain at `head`; a failed check counts as pending (logged).
   * `direct`: ask the checker now, neither through the block index nor behind the queue of checks.
   */
  async check(task: Task, head: HeadInfo, firstBlock: bigint, how: { direct?: boolean } = {}): Promise<InclusionStatus> {
    const { record, summary } = task
    const check = (): Promise<InclusionStatus> =>
      this.checker.check({
        id: record.id,
        kind: record.kind,
        txHashes: record.txHashes,
        ...(summary.backrun ? { backrunTxHash: summary.backrun.txHash } : {}),
        firstBlock,
        head,
      })
    try {
      if (how.direct === true) return await check()
      // the block index says where each hash is: no receipt request for what is not on chain
      const indexed = this.indexed
      if (indexed !== undefined && indexed.head === head.number) {
        await indexed.ready
        const from = firstBlock > 0n ? firstBlock - 1n : 0n
        if (this.blockIndex.covers(from, head.number) && record.txHashes.every((h) => this.blockIndex.blockOf(h) === undefined)) return { status: 'pending' }
      }
      // a check that waited in the queue past its head is stale: the next head asks again
      return await this.limit.run(() => (headMoved(this.ctx, head.number) ? Promise.resolve({ status: 'pending' as const }) : check()))
    } catch (err) {
      this.ctx.log.warn({ err, id: record.id }, 'inclusion check failed; treating as pending')
      return { status: 'pending' }
    }
  }
}

/** The blocks a new submission is sent for, from the next block (or the partner's fixed blockNumber). */
export function targetingFor(record: SubmissionRecord, head: HeadInfo, eligible: readonly BundleRelay[], expiryBlocks: bigint, at: number): TargetingEvent {
  const fixed = record.bundleOptions?.blockNumber
  const firstBlock = fixed ?? head.number + 1n
  const lastBlock = fixed ?? firstBlock + expiryBlocks - 1n
  return { type: 'targeting', at, firstBlock, lastBlock, relays: eligible.map((r) => r.name) }
}

/** Why the submission can no longer be sent at `head`, or undefined while it can. */
export function expiredAt(record: SubmissionRecord, head: HeadInfo, targeting: TargetingEvent | undefined, expiryBlocks: bigint): string | undefined {
  if (targeting === undefined) return undefined
  const target = head.number + 1n
  const maxTimestamp = record.bundleOptions?.maxTimestamp
  if (target > targeting.lastBlock) {
    return record.bundleOptions?.blockNumber !== undefined
      ? `the bundle's blockNumber ${targeting.lastBlock} has passed without inclusion`
      : `not included by block ${targeting.lastBlock} (${expiryBlocks} blocks)`
  }
  if (maxTimestamp !== undefined && head.timestamp >= maxTimestamp) return `maxTimestamp ${maxTimestamp} has passed without inclusion`
  return undefined
}

export function includedEvent(status: Extract<InclusionStatus, { status: 'included' }>, at: number): IncludedEvent {
  return {
    type: 'included',
    at,
    block: status.blockNumber,
    ...(status.backrunIncluded === undefined ? {} : { backrunIncluded: status.backrunIncluded }),
    ...(status.backrunIncluded === true && status.backrunTxHash !== undefined ? { backrunTxHash: status.backrunTxHash } : {}),
    ...(status.backrunIncluded === true && status.backrunGrossProfit !== undefined ? { backrunGrossProfit: status.backrunGrossProfit } : {}),
  }
}
