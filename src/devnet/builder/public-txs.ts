/**
 * Public transactions after the bundles, as a geth miner orders them: highest effective tip
 * first (min(tip cap, fee cap - base fee); legacy: gas price - base fee), each sender's in nonce
 * order (a sender's next transaction competes only once the previous one is in), ties in
 * arrival order. They land even when they revert (they pay for their gas). One that cannot be
 * included yet (nonce gap, funds, fee below the base fee, gas left) waits for a later block, up
 * to `ttlBlocks` blocks, with the rest of its sender's; one whose nonce is used is dropped.
 */
import type { Address, Hex } from '../../chain/types.ts'
import type { ExecutionBlock } from '../../evm/block-context.ts'
import { TransactionRejectedError, type SimulationState, type Simulator, type TransactionResult } from '../../evm/simulator.ts'
import type { DecodedTransaction } from '../../tx/index.ts'
import type { Executed } from './bundle-merge.ts'
import type { PendingTx } from './types.ts'

export interface PublicTxsInput {
  simulator: Simulator
  context: ExecutionBlock
  state: SimulationState
  gasUsed: bigint
  mempool: ReadonlyMap<Hex, PendingTx>
  /** transactions already in this block (bundles) or on chain */
  isIncluded: (hash: Hex) => boolean
  ttlBlocks: number
  onError: (error: unknown) => void
  /** before each transaction: gives the event loop a turn once the build's slice is spent (time-slices.ts) */
  pause: () => Promise<void>
}

export interface PublicTxsResult {
  state: SimulationState
  gasUsed: bigint
  executed: Executed[]
  /** hashes leaving the mempool (included, stale, expired, invalid forever) */
  leaving: Set<Hex>
}

/** The tip per gas the coinbase earns from `tx` at `baseFee` (negative: below the base fee). */
export function effectiveTip(tx: DecodedTransaction, baseFee: bigint | undefined): bigint {
  const base = baseFee ?? 0n
  if (tx.type === 0 || tx.type === 1) return tx.gasFeeCap - base
  const headroom = tx.gasFeeCap - base
  return tx.gasTipCap < headroom ? tx.gasTipCap : headroom
}

interface SenderQueue {
  txs: PendingTx[]
  next: number
  tip: bigint
  seq: number
}

/** Max-heap of senders by their next transaction's tip, then arrival. */
class SenderHeap {
  private readonly items: SenderQueue[] = []
  get size(): number {
    return this.items.length
  }
  push(q: SenderQueue): void {
    this.items.push(q)
    let i = this.items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(this.items[i], this.items[parent])) break
      ;[this.items[i], this.items[parent]] = [this.items[parent], this.items[i]]
      i = parent
    }
  }
  pop(): SenderQueue | undefined {
    const top = this.items[0]
    const last = this.items.pop()
    if (this.items.length > 0 && last !== undefined) {
      this.items[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let best = i
        if (l < this.items.length && before(this.items[l], this.items[best])) best = l
        if (r < this.items.length && before(this.items[r], this.items[best])) best = r
        if (best === i) break
        ;[this.items[i], this.items[best]] = [this.items[best], this.items[i]]
        i = best
      }
    }
    return top
  }
}

function before(a: SenderQueue, b: SenderQueue): boolean {
  return a.tip !== b.tip ? a.tip > b.tip : a.seq < b.seq
}

export async function includePublicTxs(input: PublicTxsInput): Promise<PublicTxsResult> {
  const { simulator, context, mempool } = input
  const target = context.number
  let state = input.state
  let gasUsed = input.gasUsed
  const executed: Executed[] = []
  const leaving = new Set<Hex>()
  const expired = (p: PendingTx) => target - p.firstBlock >= BigInt(input.ttlBlocks)

  const bySender = new Map<Address, PendingTx[]>()
  for (const [hash, pending] of mempool) {
    if (input.isIncluded(hash)) {
      leaving.add(hash)
      continue
    }
    const list = bySender.get(pending.tx.sender)
    if (list === undefined) bySender.set(pending.tx.sender, [pending])
    else list.push(pending)
  }
  const heap = new SenderHeap()
  const enqueue = (q: SenderQueue) => {
    const head = q.txs[q.next]
    if (head === undefined) return
    q.tip = effectiveTip(head.tx, context.baseFeePerGas)
    q.seq = head.seq
    heap.push(q)
  }
  /** the sender's remaining transactions wait for a later block (or leave when expired) */
  const park = (q: SenderQueue) => {
    for (let i = q.next; i < q.txs.length; i++) if (expired(q.txs[i])) leaving.add(q.txs[i].tx.hash)
  }
  for (const txs of bySender.values()) {
    // nonce order; same nonce: higher tip first, then arrival
    txs.sort((a, b) => (a.tx.nonce !== b.tx.nonce ? (a.tx.nonce < b.tx.nonce ? -1 : 1) : cmpTip(b, a, context.baseFeePerGas) || a.seq - b.seq))
    enqueue({ txs, next: 0, tip: 0n, seq: 0 })
  }

  while (heap.size > 0) {
    const q = heap.pop() as SenderQueue
    const pending = q.txs[q.next]
    const tx = pending.tx
    if (gasUsed + tx.gasLimit > context.gasLimit) {
      park(q)
      continue
    }
    await input.pause()
    const nonce = (await state.overlay.readAccount(tx.sender))?.nonce ?? 0n
    if (tx.nonce < nonce) {
      leaving.add(tx.hash)
      q.next++
      enqueue(q)
      continue
    }
    if (tx.nonce > nonce) {
      park(q)
      continue
    }
    let result: TransactionResult
    try {
      result = await simulator.transaction(state, tx.tx)
    } catch (error) {
      // funds or fee: may become includable later; anything else will never be
      if (!(error instanceof TransactionRejectedError)) {
        input.onError(error)
        leaving.add(tx.hash)
      }
      park(q)
      continue
    }
    state = result.state
    gasUsed += result.gasUsed
    executed.push({ result, tx })
    leaving.add(tx.hash)
    q.next++
    enqueue(q)
  }
  return { state, gasUsed, executed, leaving }
}

function cmpTip(a: PendingTx, b: PendingTx, baseFee: bigint | undefined): number {
  const x = effectiveTip(a.tx, baseFee)
  const y = effectiveTip(b.tx, baseFee)
  return x === y ? 0 : x < y ? -1 : 1
}
