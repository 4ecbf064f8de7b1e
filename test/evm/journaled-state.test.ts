import { Account, createAddressFromString, KECCAK256_NULL } from '@ethereumjs/util'
import { describe, expect, it } from 'vitest'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import type { GenesisAccount } from '../../src/chain/memory/genesis.ts'
import type { Address } from '../../src/chain/types.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'

const A: Address = '0x00000000000000000000000000000000000000aa'
const B: Address = '0x00000000000000000000000000000000000000bb'
const a = createAddressFromString(A)
const key = (n: number) => {
  const k = new Uint8Array(32)
  k[31] = n
  return k
}
const val = (n: number) => Uint8Array.from([n])

function baseWith(storage: Map<bigint, bigint>): MemoryStateReader {
  const accounts = new Map<Address, GenesisAccount>([
    [A, { nonce: 1n, balance: 100n, code: Uint8Array.from([0x60, 0x00]), codeHash: KECCAK256_NULL, storage }],
  ])
  return new MemoryStateReader(EMPTY_STATE_READER.block, accounts)
}

describe('JournaledState', () => {
  it('reads through to the base and never writes to it', async () => {
    const base = baseWith(new Map([[1n, 7n]]))
    const s = JournaledState.over(base)
    expect((await s.getStorage(a, key(1)))[0]).toBe(7)
    await s.putStorage(a, key(1), val(9))
    expect((await s.getStorage(a, key(1)))[0]).toBe(9)
    expect(await base.getStorage(A, 1n)).toBe(7n)
  })

  it('nested checkpoints: inner revert undoes only the inner writes, outer commit keeps the rest', async () => {
    const s = JournaledState.over(baseWith(new Map()))
    await s.checkpoint()
    await s.putStorage(a, key(1), val(1))
    await s.checkpoint()
    await s.putStorage(a, key(1), val(2))
    await s.putStorage(a, key(2), val(3))
    await s.revert()
    expect((await s.getStorage(a, key(1)))[0]).toBe(1)
    expect((await s.getStorage(a, key(2))).length).toBe(0)
    await s.commit()
    expect((await s.getStorage(a, key(1)))[0]).toBe(1)
  })

  it('storage is reverted correctly after a committed run (the stock RPCStateManager bug)', async () => {
    const s = JournaledState.over(baseWith(new Map([[1n, 5n]])))
    await s.checkpoint()
    await s.putStorage(a, key(1), val(6))
    await s.commit()
    await s.checkpoint()
    await s.putStorage(a, key(1), val(7))
    await s.revert()
    expect((await s.getStorage(a, key(1)))[0]).toBe(6)
  })

  it('clearStorage hides base slots and is undone by revert', async () => {
    const s = JournaledState.over(baseWith(new Map([[1n, 5n]])))
    await s.checkpoint()
    await s.putStorage(a, key(2), val(2))
    await s.clearStorage(a)
    expect((await s.getStorage(a, key(1))).length).toBe(0)
    await s.putStorage(a, key(3), val(3))
    await s.revert()
    expect((await s.getStorage(a, key(1)))[0]).toBe(5)
    expect((await s.getStorage(a, key(2))).length).toBe(0)
    expect((await s.getStorage(a, key(3))).length).toBe(0)
  })

  it('deleteAccount removes account, code and storage; revert restores them', async () => {
    const s = JournaledState.over(baseWith(new Map([[1n, 5n]])))
    await s.checkpoint()
    await s.deleteAccount(a)
    expect(await s.getAccount(a)).toBeUndefined()
    expect((await s.getCode(a)).length).toBe(0)
    expect((await s.getStorage(a, key(1))).length).toBe(0)
    await s.revert()
    expect((await s.getAccount(a))?.balance).toBe(100n)
    expect((await s.getCode(a)).length).toBe(2)
  })

  it('getAccount returns a fresh object each time (ethereumjs mutates it)', async () => {
    const s = JournaledState.over(baseWith(new Map()))
    const first = await s.getAccount(a)
    first!.balance = 1n
    expect((await s.getAccount(a))?.balance).toBe(100n)
  })

  it('fork: the child sees the parent, the parent is frozen, siblings are independent', async () => {
    const parent = JournaledState.over(baseWith(new Map()))
    await parent.putAccount(createAddressFromString(B), new Account(0n, 50n))
    const c1 = parent.fork()
    const c2 = parent.fork()
    await c1.modifyAccountFields(createAddressFromString(B), { balance: 1n })
    expect((await c1.getAccount(createAddressFromString(B)))?.balance).toBe(1n)
    expect((await c2.getAccount(createAddressFromString(B)))?.balance).toBe(50n)
    await expect(parent.putStorage(a, key(1), val(1))).rejects.toThrow(/frozen/)
  })

  it('a checkpoint records only what changes after it, whatever the size of the state', async () => {
    const s = JournaledState.over(baseWith(new Map()))
    for (let i = 0; i < 5_000; i++) await s.putStorage(a, key(i % 256).map((b, j) => (j === 0 ? i >> 8 : b)), val(1))
    expect(s.journalLength).toBe(0)
    await s.checkpoint()
    await s.putStorage(a, key(1), val(2))
    expect(s.journalLength).toBe(1)
    await s.revert()
    expect(s.journalLength).toBe(0)
    expect((await s.getStorage(a, key(1)))[0]).toBe(1)
  })
})
