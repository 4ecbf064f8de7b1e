/**
 * What BLOCKHASH reads. ethereumjs' opcode asks the EVM's `blockchain` for the block
 * (`runState.blockchain.getBlock(n)`, then `.hash()`) once it has checked the window (n within
 * the 256 blocks before the executing one); without a blockchain it answers zero. A pooled EVM is
 * bound to one simulation's overlay at a time, so this blockchain asks the StateReader under the
 * overlay the EVM is bound to now (StateReader.getBlockHash): the EVM never learns where hashes
 * come from, and every simulation sees the chain of the block its state is pinned to.
 *
 * A reader without getBlockHash, or a number it does not know, answers zero (as before).
 * A reader that fails (the fork's upstream read) rejects, and the execution fails with it.
 */
import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { hexToBytesStrict } from '../chain/quantity.ts'
import { JournaledState } from './journaled-state.ts'

/** What ethereumjs asks of a block here: its hash. */
type EVMMockBlock = Awaited<ReturnType<EVMMockBlockchainInterface['getBlock']>>

const ZERO_HASH: EVMMockBlock = { hash: () => new Uint8Array(32) }

export class ReaderBlockHashes implements EVMMockBlockchainInterface {
  private stateManager: (() => unknown) | undefined

  /** Reads go to the reader under whatever overlay `stateManager()` returns (the EVM's, once created). */
  attach(stateManager: () => unknown): void {
    this.stateManager = stateManager
  }

  async getBlock(blockId: number): Promise<EVMMockBlock> {
    const state = this.stateManager?.()
    if (!(state instanceof JournaledState) || state.reader.getBlockHash === undefined) return ZERO_HASH
    const hash = await state.reader.getBlockHash(BigInt(blockId))
    if (hash === undefined) return ZERO_HASH
    const bytes = hexToBytesStrict(hash, 'block hash')
    return { hash: () => bytes }
  }

  /** Nothing is stored: blocks are the chain source's. */
  async putBlock(): Promise<void> {}

  /** A copied VM has its own state manager: the copy answers zero until it is attached to it. */
  shallowCopy(): EVMMockBlockchainInterface {
    return new ReaderBlockHashes()
  }
}
