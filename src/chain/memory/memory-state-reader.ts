/** A StateReader over accounts held in memory: the embedded devnet and replayed prestates. */
import type { AccountInfo, Address, BlockInfo, Hex, StateReader } from '../types.ts'
import type { GenesisAccount } from './genesis.ts'

const EMPTY = new Uint8Array(0)

export class MemoryStateReader implements StateReader {
  constructor(
    readonly block: BlockInfo,
    private readonly accounts: ReadonlyMap<Address, GenesisAccount>,
  ) {}

  async getAccount(address: Address): Promise<AccountInfo | undefined> {
    const a = this.accounts.get(address)
    return a === undefined ? undefined : { nonce: a.nonce, balance: a.balance, codeHash: a.codeHash }
  }

  async getCode(address: Address): Promise<Uint8Array> {
    return this.accounts.get(address)?.code ?? EMPTY
  }

  async getStorage(address: Address, slot: bigint): Promise<bigint> {
    return this.accounts.get(address)?.storage.get(slot) ?? 0n
  }

  /** Only its own block's: a state held in memory knows no ancestors (the devnet's genesis has none). */
  async getBlockHash(number: bigint): Promise<Hex | undefined> {
    return number === this.block.number ? this.block.hash : undefined
  }

  async hasStorage(address: Address): Promise<boolean> {
    for (const value of this.accounts.get(address)?.storage.values() ?? []) if (value !== 0n) return true
    return false
  }
}
