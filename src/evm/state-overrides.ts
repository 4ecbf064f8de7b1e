/**
 * State overrides applied to a writable simulation state before execution: ETH balance, nonce,
 * code and raw storage of any account (the eth_call override set), plus ERC-20 balance and
 * allowance for any standard token through generic slot discovery (see erc20-slots.ts).
 */
import { Account, bigIntToBytes, createAddressFromString, setLengthLeft } from '@ethereumjs/util'
import { hexToBytesStrict } from '../chain/quantity.ts'
import type { Address, Hex } from '../chain/types.ts'
import type { SimulationState } from './simulator.ts'
import { bytesOfWord } from './word-memory.ts'

export interface AccountOverride {
  balance?: bigint
  nonce?: bigint
  code?: Hex | Uint8Array
  /** slots set on top of the account's existing storage */
  storage?: ReadonlyMap<bigint, bigint>
}

export type AccountOverrides = ReadonlyMap<Address, AccountOverride>

export async function applyAccountOverrides(state: SimulationState, overrides: AccountOverrides): Promise<void> {
  const overlay = state.overlay
  for (const [address, o] of overrides) {
    const ejsAddress = createAddressFromString(address)
    if (o.code !== undefined) {
      await overlay.putCode(ejsAddress, typeof o.code === 'string' ? hexToBytesStrict(o.code, `${address}.code`) : o.code)
    }
    if (o.balance !== undefined || o.nonce !== undefined) {
      const current = (await overlay.getAccount(ejsAddress)) ?? new Account()
      await overlay.modifyAccountFields(ejsAddress, {
        balance: o.balance ?? current.balance,
        nonce: o.nonce ?? current.nonce,
      })
    }
    for (const [slot, value] of o.storage ?? []) await setStorage(state, address, slot, value)
  }
}

const MAX_UINT256 = (1n << 256n) - 1n

export async function setStorage(state: SimulationState, address: Address, slot: bigint, value: bigint): Promise<void> {
  // a slot word as its 32 big-endian bytes (bytesOfWord: no hex string); anything else as it always was
  const key = slot >= 0n && slot <= MAX_UINT256 ? bytesOfWord(slot) : setLengthLeft(bigIntToBytes(slot), 32)
  await state.overlay.putStorage(createAddressFromString(address), key, value === 0n ? new Uint8Array(0) : bigIntToBytes(value))
}
