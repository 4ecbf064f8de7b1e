/**
 * The one read-only state interface the EVM layer sees. Two sources implement it: the embedded
 * devnet (a genesis alloc held in memory) and a fork of an upstream JSON-RPC node. A reader is
 * pinned to one block, so a simulation never mixes reads from two blocks.
 */

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
}

export interface PrefetchRequest {
  accounts?: Address[]
  storage?: Array<{ address: Address; slot: bigint }>
}

/** A chain's state source: hands out readers pinned to its latest known block. */
export interface ChainStateSource {
  readonly kind: 'devnet' | 'fork'
  readonly chainId: bigint
  /** Reader pinned to the newest block this source has adopted. */
  latest(): StateReader
  /** Called with each newly adopted head. Returns an unsubscribe function. */
  onNewHead(listener: (block: BlockInfo) => void): () => void
  /** Liveness of the underlying source (upstream reachable). */
  ready(): Promise<boolean>
  close(): Promise<void>
}

/** Raised for every failure to read from the upstream node: HTTP errors, JSON-RPC errors, timeouts. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError'
  constructor(
    message: string,
    readonly reason: 'http' | 'rpc' | 'timeout' | 'network' | 'malformed',
    readonly details?: { method?: string; status?: number; rpcCode?: number },
  ) {
    super(message)
  }
}
