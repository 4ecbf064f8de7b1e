/** A reader of an empty world, used to construct VMs before they are bound to a real overlay. */
import type { StateReader } from '../chain/types.ts'

export const EMPTY_STATE_READER: StateReader = {
  block: {
    number: 0n,
    hash: `0x${'00'.repeat(32)}`,
    timestamp: 0n,
    gasLimit: 30_000_000n,
    gasUsed: 0n,
    coinbase: `0x${'00'.repeat(20)}`,
    prevRandao: `0x${'00'.repeat(32)}`,
    difficulty: 0n,
  },
  getAccount: async () => undefined,
  getCode: async () => new Uint8Array(0),
  getStorage: async () => 0n,
}
