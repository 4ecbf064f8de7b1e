/**
 * The embedded devnet: the chain state of a genesis file (real Uniswap contracts deployed by
 * scripts/build-devnet.ts), held in memory. It needs no network; its head advances when a block
 * is built locally (the local builder, src/devnet/) and committed with `commitBlock`.
 *
 * Each head's reader is the previous head's plus the block's changes (a LayeredStateReader):
 * committing costs what the block changed, and readers of older heads keep seeing their own
 * block. The stack of layers is flattened every `maxLayerDepth` blocks (see layered-state-reader.ts).
 */
import { readFileSync } from 'node:fs'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { BaseError } from '../../primitives/base-error.ts'
import { nextBaseFee, type ExecutionBlock } from '../next-block.ts'
import { bytesToHexString } from '../quantity.ts'
import type { BlockInfo, ChainReorg, ChainStateSource, Hex, StateReader } from '../types.ts'
import { parseGenesis, type GethGenesisJson, type ParsedGenesis } from './genesis.ts'
import { DEFAULT_MAX_LAYER_DEPTH, LayeredStateReader, type DevnetBlockInfo, type StateChanges } from './layered-state-reader.ts'
import { MemoryStateReader } from './memory-state-reader.ts'

export interface DevnetStateSourceOptions {
  /** Layers a head's reader may stack above the genesis before it is flattened. Default 64. */
  maxLayerDepth?: number
  /** Errors thrown by onNewHead listeners (they never undo a commit). Default: ignored. */
  onError?: (error: unknown) => void
}

/**
 * What commitBlock needs from a simulation's result: a state overlay (the JournaledState of a
 * SimulationState, or the SimulationState itself) that knows the reader it was opened on and
 * can list what it changed relative to it.
 */
export interface CommittableOverlay {
  readonly reader: StateReader
  changesSinceReader(): StateChanges
}
export type CommittableState = CommittableOverlay | { readonly overlay: CommittableOverlay }

/**
 * The header of the block being committed: the context its transactions executed in (number =
 * head + 1, parentHash = the head's hash, a later timestamp, the head's EIP-1559 base fee), and
 * their gas.
 */
export interface CommitBlockFields extends ExecutionBlock {
  /** sum of the included transactions' receipt gasUsed: the next block's base fee follows from it */
  gasUsed: bigint
  /** the included transactions, in block order (they enter the block hash) */
  transactionHashes?: readonly Hex[]
}

/** A commit that does not fit the head (stale state, wrong number, parent, timestamp or base fee). */
export class DevnetCommitError extends BaseError {
  override readonly name = 'DevnetCommitError'
}

export class DevnetStateSource implements ChainStateSource {
  readonly kind = 'devnet' as const
  readonly chainId: bigint
  private current: StateReader
  private readonly listeners = new Set<(block: BlockInfo) => void>()
  private readonly maxLayerDepth: number
  private readonly onError: (error: unknown) => void

  constructor(
    readonly genesis: ParsedGenesis,
    options: DevnetStateSourceOptions = {},
  ) {
    this.chainId = genesis.chainId
    this.current = new MemoryStateReader(genesis.block, genesis.accounts)
    this.maxLayerDepth = options.maxLayerDepth ?? DEFAULT_MAX_LAYER_DEPTH
    if (!Number.isSafeInteger(this.maxLayerDepth) || this.maxLayerDepth < 1) {
      throw new RangeError(`maxLayerDepth must be a positive integer, got ${options.maxLayerDepth}`)
    }
    this.onError = options.onError ?? (() => {})
  }

  static fromGenesisFile(path: string, options: DevnetStateSourceOptions = {}): DevnetStateSource {
    let json: GethGenesisJson
    try {
      json = JSON.parse(readFileSync(path, 'utf8')) as GethGenesisJson
    } catch (err) {
      throw new Error(`cannot read the devnet genesis ${path}: ${(err as Error).message} (run npm run build:devnet)`)
    }
    return new DevnetStateSource(parseGenesis(json), options)
  }

  latest(): StateReader {
    return this.current
  }

  /**
   * Commits a block: the new head's reader is the current head's state plus what `state` changed
   * (every overlay in its chain, down to the reader it was opened on, which must be the current
   * head). The block hash is deterministic: keccak256 of number, parent hash, timestamp, gas
   * used, the included transaction hashes and a digest of the state changes. Listeners are told
   * after the head moved.
   *
   * @returns the new head's reader
   * @throws DevnetCommitError when the state was not opened on the current head, or the fields do
   *   not describe the head's child (nothing is committed then)
   */
  commitBlock(state: CommittableState, fields: CommitBlockFields): LayeredStateReader {
    const overlay = 'overlay' in state ? state.overlay : state
    const head = this.current.block
    if (overlay.reader !== this.current) {
      throw new DevnetCommitError(`the state was opened on block ${overlay.reader.block.number}, not on the head ${head.number}: rebuild the block on the head`)
    }
    const problems = commitProblems(head, fields)
    if (problems.length > 0) throw new DevnetCommitError(`block ${fields.number} does not extend the head ${head.number}: ${problems.join('; ')}`)
    const changes = overlay.changesSinceReader()
    const transactionHashes = fields.transactionHashes ?? []
    const block: DevnetBlockInfo = {
      number: fields.number,
      hash: blockHash(fields, transactionHashes, changes),
      parentHash: fields.parentHash,
      timestamp: fields.timestamp,
      gasLimit: fields.gasLimit,
      gasUsed: fields.gasUsed,
      baseFeePerGas: fields.baseFeePerGas,
      coinbase: fields.coinbase,
      prevRandao: fields.prevRandao,
      difficulty: fields.difficulty,
      excessBlobGas: fields.excessBlobGas,
      // no blob transactions are built on the devnet
      blobGasUsed: head.blobGasUsed === undefined && fields.excessBlobGas === undefined ? undefined : 0n,
      transactionHashes: transactionHashes.map((h) => h.toLowerCase() as Hex),
    }
    const reader = LayeredStateReader.stack(this.current, block, changes, this.maxLayerDepth)
    this.current = reader
    this.notify(block)
    return reader
  }

  /**
   * Makes `reader` the new head (a block built locally) and tells the listeners.
   * @throws DevnetCommitError when its block is not newer than the head
   */
  adopt(reader: StateReader): void {
    if (reader.block.number <= this.current.block.number) {
      throw new DevnetCommitError(`block ${reader.block.number} is not newer than the head ${this.current.block.number}`)
    }
    this.current = reader
    this.notify(reader.block)
  }

  onNewHead(listener: (block: BlockInfo) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Never called: a committed block always extends the head (commitBlock refuses anything else), so the devnet never reorgs. */
  onReorg(_listener: (reorg: ChainReorg) => void): () => void {
    return () => {}
  }

  async ready(): Promise<boolean> {
    return true
  }

  async close(): Promise<void> {
    this.listeners.clear()
  }

  private notify(block: BlockInfo): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(block)
      } catch (error) {
        this.onError(error)
      }
    }
  }
}

function commitProblems(head: BlockInfo, fields: CommitBlockFields): string[] {
  const problems: string[] = []
  if (fields.number !== head.number + 1n) problems.push(`number ${fields.number} is not ${head.number + 1n}`)
  if (fields.parentHash !== head.hash) problems.push(`parentHash ${fields.parentHash} is not the head's hash ${head.hash}`)
  if (fields.timestamp <= head.timestamp) problems.push(`timestamp ${fields.timestamp} is not after the head's ${head.timestamp}`)
  const baseFee = nextBaseFee(head)
  if (fields.baseFeePerGas !== baseFee) problems.push(`baseFeePerGas ${fields.baseFeePerGas} is not the EIP-1559 base fee ${baseFee} after the head`)
  if (fields.gasLimit <= 0n) problems.push('gasLimit must be positive')
  if (fields.gasUsed < 0n || fields.gasUsed > fields.gasLimit) problems.push(`gasUsed ${fields.gasUsed} is outside 0..gasLimit ${fields.gasLimit}`)
  return problems
}

const TAG_ACCOUNT = 1
const TAG_DELETED = 2
const TAG_CODE = 3
const TAG_CLEARED = 4
const TAG_SLOT = 5

function blockHash(fields: CommitBlockFields, transactionHashes: readonly Hex[], changes: StateChanges): Hex {
  const h = keccak_256.create()
  h.update(word(fields.number))
  h.update(hexBytes(fields.parentHash))
  h.update(word(fields.timestamp))
  h.update(word(fields.gasUsed))
  for (const tx of transactionHashes) h.update(hexBytes(tx))
  h.update(stateDigest(changes))
  return bytesToHexString(h.digest())
}

/** keccak256 of the changes in a canonical order (addresses, then slots, sorted). */
export function stateDigest(changes: StateChanges): Uint8Array {
  const h = keccak_256.create()
  for (const address of [...changes.accounts.keys()].sort()) {
    const entry = changes.accounts.get(address)
    h.update(Uint8Array.of(entry === null ? TAG_DELETED : TAG_ACCOUNT))
    h.update(hexBytes(address))
    if (entry !== null && entry !== undefined) {
      h.update(word(entry.nonce))
      h.update(word(entry.balance))
      h.update(entry.codeHash)
    }
  }
  for (const address of [...changes.code.keys()].sort()) {
    h.update(Uint8Array.of(TAG_CODE))
    h.update(hexBytes(address))
    h.update(keccak_256(changes.code.get(address) ?? new Uint8Array(0)))
  }
  for (const address of [...changes.cleared].sort()) {
    h.update(Uint8Array.of(TAG_CLEARED))
    h.update(hexBytes(address))
  }
  for (const address of [...changes.storage.keys()].sort()) {
    const slots = changes.storage.get(address)
    if (slots === undefined) continue
    for (const slot of [...slots.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      h.update(Uint8Array.of(TAG_SLOT))
      h.update(hexBytes(address))
      h.update(word(slot))
      h.update(word(slots.get(slot) ?? 0n))
    }
  }
  return h.digest()
}

function word(value: bigint): Uint8Array {
  return hexBytes(`0x${value.toString(16).padStart(64, '0')}`)
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'))
}
