/**
 * The main thread's side of the workers' state: answers their reads from the main thread's state
 * source, the one cache of the process (fork mode: one upstream fetch per key and block, however
 * many workers ask), and announces its new heads to them.
 *
 * A worker names the block of each read by hash: the block the main thread chose for its task. The
 * readers of the last MAX_PINNED_BLOCKS such blocks are kept, so a task that started before a new
 * head still reads the block it started on.
 */
import { LRUCache } from 'lru-cache'
import { bytesToHex } from 'viem'
import type { BlockInfo, BlockStateDiff, Hex, StateReader } from '../chain/types.ts'
import type { ChainStateSource } from '../chain/types.ts'
import { domainErrors } from './error-registry.ts'
import { compactBytes, type CodeAnswer, type PrefetchAnswer, type StateRead, type StateReadResult } from './protocol.ts'

/** Blocks whose readers workers may still read: far more heads than a task lasts. */
export const MAX_PINNED_BLOCKS = 16
/**
 * Keys a head's state diff may name and still be sent to the workers (they carry their L1 over to
 * the head as far as the diff vouches); a larger diff is not sent and the workers' L1 of that head
 * starts empty. Bounds the message: ~100 bytes a key, 2 MB at most.
 */
export const MAX_ANNOUNCED_DIFF_KEYS = 20_000

const EMPTY_CODE = new Uint8Array(0)

/** getBlockHash is optional on StateReader (and newer than some readers): asked where present. */
type BlockHashReader = StateReader & { getBlockHash?(number: bigint): Promise<Hex | undefined> }

export class StateHost {
  private readonly readers = new LRUCache<Hex, StateReader>({ max: MAX_PINNED_BLOCKS })

  constructor(private readonly chain: ChainStateSource) {}

  /** The reader of the main thread's latest head, kept for the workers; its block goes with the task. */
  pinLatest(): StateReader {
    const reader = this.chain.latest()
    const kept = this.readers.get(reader.block.hash)
    if (kept !== undefined) return kept
    this.readers.set(reader.block.hash, reader)
    return reader
  }

  /**
   * What `reader`'s block changed relative to its parent, as its source knows it (the devnet: every
   * changed key; a fork: the re-read keys that did not change), when it names at most
   * MAX_ANNOUNCED_DIFF_KEYS keys; else undefined.
   */
  diffOf(reader: StateReader): BlockStateDiff | undefined {
    const diff = reader.stateDiff?.()
    if (diff === undefined) return undefined
    let keys = diff.accounts.length + (diff.kind === 'changed' ? diff.clearedStorage.length : 0)
    for (const [, slots] of diff.storage) keys += slots.length
    return keys <= MAX_ANNOUNCED_DIFF_KEYS ? diff : undefined
  }

  onNewHead(listener: (block: BlockInfo) => void): () => void {
    return this.chain.onNewHead(listener)
  }

  /** Answers a batch of reads of one block, each read on its own (one failing does not fail the others). */
  async answer(blockHash: Hex, reads: readonly StateRead[]): Promise<StateReadResult[]> {
    const reader = this.readers.get(blockHash)
    if (reader === undefined) {
      const error = domainErrors.serialize(new Error(`block ${blockHash} is no longer readable by workers (more than ${MAX_PINNED_BLOCKS} heads ago)`))
      return reads.map(() => ({ ok: false, error }))
    }
    const settled = await Promise.allSettled(reads.map((read) => answerRead(reader, read)))
    return settled.map((s) => (s.status === 'fulfilled' ? { ok: true, value: s.value } : { ok: false, error: domainErrors.serialize(s.reason) }))
  }
}

async function answerRead(reader: BlockHashReader, read: StateRead): Promise<unknown> {
  switch (read.op) {
    case 'account': {
      const account = await reader.getAccount(read.address)
      return account === undefined ? undefined : { ...account, codeHash: compactBytes(account.codeHash) }
    }
    case 'code': {
      const [code, account] = await Promise.all([reader.getCode(read.address), reader.getAccount(read.address)])
      const answer: CodeAnswer = code.byteLength === 0 ? { code: EMPTY_CODE, codeHash: undefined } : { code: compactBytes(code), codeHash: account === undefined ? undefined : bytesToHex(account.codeHash) }
      return answer
    }
    case 'storage':
      return reader.getStorage(read.address, read.slot)
    case 'hasStorage':
      return (await reader.hasStorage?.(read.address)) ?? false
    case 'blockHash':
      return reader.getBlockHash?.(read.number)
    case 'prefetch': {
      await reader.prefetch?.({ accounts: read.accounts, storage: read.storage })
      const [accounts, storage] = await Promise.all([
        Promise.all(read.accounts.map((address) => answerRead(reader, { op: 'account', address }))),
        Promise.all(read.storage.map(({ address, slot }) => reader.getStorage(address, slot))),
      ])
      const answer: PrefetchAnswer = { accounts: accounts as PrefetchAnswer['accounts'], storage }
      return answer
    }
  }
}
