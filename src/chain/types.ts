/**
 * The one read-only state interface the EVM layer sees. Two sources implement it: the embedded
 * devnet (a genesis alloc held in memory) and a fork of an upstream JSON-RPC node. A reader is
 * pinned to one block, so a simulation never mixes reads from two blocks.
 */
import { BaseError } from '../primitives/base-error.ts'

/** 0x-prefixed lowercase hex. */
export type Hex = `0x${string}`
/** 0x-prefixed lowercase 20-byte address. */
export type Address = `0x${string}`

export interface AccountInfo {
  nonce: bigint
  balance: bigint
  /** keccak256 of the code; KECCAK256_NULL for accounts without code */
  codeHash: Uint8Array
}

/** The header fields a simulation needs from the block the state is pinned to. */
export interface BlockInfo {
  number: bigint
  hash: Hex
  /**
   * The parent block's hash, when the source knows it (a fork reads it from the header, a devnet
   * block records the head it was built on). Lets a follower see that a new head does not extend
   * the block it adopted before (a reorg), and answers BLOCKHASH(number - 1) without a read.
   */
  parentHash?: Hex
  timestamp: bigint
  gasLimit: bigint
  gasUsed: bigint
  /** undefined before London */
  baseFeePerGas?: bigint
  coinbase: Address
  /** mixHash / prevRandao */
  prevRandao: Hex
  difficulty: bigint
  excessBlobGas?: bigint
  blobGasUsed?: bigint
  /**
   * The block's transaction hashes (lower case), when the source has them: the devnet always, a
   * fork from the eth_getBlockByNumber answer it reads the header from. Lets the dispatcher see
   * which submissions landed without asking for receipts.
   */
  transactionHashes?: readonly Hex[]
}

/** Read-only view of the world state at one block. Implementations cache as they see fit. */
export interface StateReader {
  readonly block: BlockInfo
  /** undefined when the account does not exist */
  getAccount(address: Address): Promise<AccountInfo | undefined>
  /**
   * The returned array is shared and must never be mutated: returning the same object for the
   * same code lets the EVM memoise its jump-destination analysis.
   */
  getCode(address: Address): Promise<Uint8Array>
  getStorage(address: Address, slot: bigint): Promise<bigint>
  /** Warm these reads in one round trip where the source supports it (a no-op in memory). */
  prefetch?(reads: PrefetchRequest): Promise<void>
  /**
   * Whether the account has any non-zero storage slot at this block (its storage root is not the
   * empty trie's), whether or not the account otherwise exists. Only asked for the target of a
   * contract creation (EIP-7610: creating over storage is a collision), never on ordinary reads,
   * so a source may answer it at a cost it would not pay per read (the fork: one eth_getProof).
   * A reader without it is taken to hold no storage on codeless, nonce-0 accounts.
   */
  hasStorage?(address: Address): Promise<boolean>
  /**
   * The hash of block `number` on this reader's chain, for the BLOCKHASH opcode: answered for
   * `block.number - BLOCK_HASH_WINDOW <= number <= block.number` (the window of an execution in
   * the next block, plus the one before it for an execution in this very block), undefined outside
   * it. A simulation runs in the next block, so BLOCKHASH(n) of the EVM asks this for n in
   * [block.number - 255, block.number]. Rejects with an UpstreamError when the source cannot read
   * it: a wrong zero would be a silent divergence from the chain. A reader without it answers
   * zero for every block (the EVM's behaviour without history).
   */
  getBlockHash?(number: bigint): Promise<Hex | undefined>
  /**
   * What this block changed relative to its parent, as far as the source knows: every changed key
   * where it built the block (the devnet), or the keys it re-read and found unchanged (a fork,
   * which re-reads its recent keys at each head); undefined when it knows neither (a reorg, a gap).
   */
  stateDiff?(): BlockStateDiff | undefined
}

/**
 * How a cache of the state at block `parentHash` stays true for a child block (addresses lower
 * case): forget the keys a `changed` diff names, or keep only those an `unchanged` one names.
 * Values are not carried: a forgotten key is read again.
 */
export type BlockStateDiff = BlockChangedKeys | BlockUnchangedKeys

/** Every key the block changed (the devnet knows them all): the rest is as in the parent. */
export interface BlockChangedKeys {
  kind: 'changed'
  parentHash: Hex
  /** accounts whose nonce, balance or code changed, created or deleted: their account, code and storage presence */
  accounts: readonly Address[]
  /** slots written, per account (written with the value they had counts too) */
  storage: ReadonlyArray<readonly [Address, readonly bigint[]]>
  /** accounts whose whole storage was cleared: every slot of theirs */
  clearedStorage: readonly Address[]
}

/** Keys known to hold the parent's values at this block (a fork's re-read keys that did not change); nothing else is. */
export interface BlockUnchangedKeys {
  kind: 'unchanged'
  parentHash: Hex
  /** accounts with the same nonce, balance and code hash (their code too) */
  accounts: readonly Address[]
  /** slots with the same value, per account */
  storage: ReadonlyArray<readonly [Address, readonly bigint[]]>
}

/** How far back BLOCKHASH sees: the 256 most recent complete blocks (yellow paper). */
export const BLOCK_HASH_WINDOW = 256n

export interface PrefetchRequest {
  accounts?: Address[]
  storage?: Array<{ address: Address; slot: bigint }>
}

/**
 * The source replaced blocks it had adopted: the upstream's chain no longer holds them (a head
 * replaced at the same height, or a new head whose parent is not the block adopted before).
 * Everything the source cached for the dropped blocks is gone before this is emitted; readers of
 * dropped blocks still answer, but for a block that will not be built on.
 */
export interface ChainReorg {
  /**
   * the newest block both chains share (the new head descends from it); undefined when the reorg
   * is deeper than the source looks (the fork's maxReorgDepth): take every block as replaced
   */
  commonAncestor: { number: bigint; hash: Hex } | undefined
  /** the blocks the source knew above the common ancestor that were replaced, oldest first */
  dropped: ReadonlyArray<{ number: bigint; hash: Hex }>
  /** the head adopted in their place (also emitted through onNewHead right after this) */
  newHead: BlockInfo
}

/** A chain's state source: hands out readers pinned to its latest known block. */
export interface ChainStateSource {
  readonly kind: 'devnet' | 'fork'
  readonly chainId: bigint
  /** Reader pinned to the newest block this source has adopted. */
  latest(): StateReader
  /** Called with each newly adopted head. Returns an unsubscribe function. */
  onNewHead(listener: (block: BlockInfo) => void): () => void
  /**
   * Called when a reorg is adopted, before onNewHead is called with `reorg.newHead`; the new
   * head's number may then be equal to or lower than the previous head's. Returns an unsubscribe
   * function. A listener that keeps per-block work (plans, sends, an index of which transaction
   * landed where) must forget what it holds for `reorg.dropped` and redo it on the new head.
   */
  onReorg(listener: (reorg: ChainReorg) => void): () => void
  /** Liveness of the underlying source (upstream reachable). */
  ready(): Promise<boolean>
  close(): Promise<void>
}

export interface UpstreamErrorDetails {
  method?: string
  status?: number
  rpcCode?: number
}

/**
 * Raised for every failure to read from the upstream node: HTTP errors, JSON-RPC errors, timeouts,
 * answers that do not decode. The upstream reads' member of the transport family
 * (src/transport/transport-error.ts): when the call reached the transport, its TransportError is
 * the cause. `message` is written `<method>: <what happened>`; `shortMessage` is what happened,
 * without the method in front.
 */
export class UpstreamError extends BaseError<UpstreamErrorDetails | undefined> {
  override readonly name = 'UpstreamError'
  constructor(
    message: string,
    readonly reason: 'http' | 'rpc' | 'timeout' | 'network' | 'malformed',
    details?: UpstreamErrorDetails,
    options: { cause?: unknown } = {},
  ) {
    const prefix = details?.method === undefined ? undefined : `${details.method}: `
    const shortMessage = prefix !== undefined && message.startsWith(prefix) ? message.slice(prefix.length) : message
    super(shortMessage, { message, details, cause: options.cause })
  }
}
