import { Account, createAddressFromString, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util'
import { describe, expect, it } from 'vitest'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import type { GenesisAccount } from '../../src/chain/memory/genesis.ts'
import type { Address } from '../../src/chain/types.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { accountNowOrLater, JournaledState, NOT_HELD } from '../../src/evm/journaled-state.ts'

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

  it('writing back an account this overlay already holds unchanged records nothing, and reverts stay exact', async () => {
    const s = JournaledState.over(baseWith(new Map()))
    const b = createAddressFromString(B)
    await s.checkpoint()
    await s.putAccount(b, new Account(0n, 50n)) // new here: recorded
    expect(s.journalLength).toBe(1)
    await s.checkpoint()
    await s.putAccount(b, (await s.getAccount(b))!) // as read: nothing to write or undo
    await s.putAccount(a, (await s.getAccount(a))!) // held by the base only: written here, recorded
    expect(s.journalLength).toBe(2)
    const changed = (await s.getAccount(b))!
    changed.balance = 49n
    await s.putAccount(b, changed)
    expect(s.journalLength).toBe(3)
    await s.revert()
    expect((await s.getAccount(b))?.balance).toBe(50n)
    expect(s.diff().accounts.has(A)).toBe(false)
    await s.revert()
    expect(await s.getAccount(b)).toBeUndefined()
  })

  it('answers a failed write or commit as a rejected promise, as an async function would', async () => {
    const parent = JournaledState.over(baseWith(new Map()))
    parent.fork()
    const put = parent.putAccount(a, new Account(5n, 5n))
    await expect(put).rejects.toThrow(/frozen/)
    await expect(JournaledState.over(baseWith(new Map())).commit()).rejects.toThrow(/commit without checkpoint/)
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

describe('JournaledState held accounts (read at once by the call frames)', () => {
  it('answers what getAccount would, as a fresh object, only for an entry this layer holds', async () => {
    const s = JournaledState.over(baseWith(new Map()))
    // read from the base: not held, so through getAccount's promise
    expect(s.heldAccount(a)).toBe(NOT_HELD)
    const read = accountNowOrLater(s, a)
    expect(read).toBeInstanceOf(Promise)
    expect(await read).toEqual(await s.getAccount(a))
    await s.putAccount(a, new Account(2n, 50n))
    const held = s.heldAccount(a)
    expect(held).toEqual(await s.getAccount(a))
    expect(held).toMatchObject({ nonce: 2n, balance: 50n })
    // a fresh object each time: the EVM mutates the one it gets before putting it back
    expect(accountNowOrLater(s, a)).not.toBe(held)
    expect(accountNowOrLater(s, a)).toEqual(held)
    // a deleted account is held as absent
    await s.deleteAccount(a)
    expect(s.heldAccount(a)).toBeUndefined()
    // a frozen parent's entry is below this layer: read through getAccount
    const child = s.fork()
    expect(child.heldAccount(a)).toBe(NOT_HELD)
  })

  it("leaves a creation's collision check to getAccount", async () => {
    const s = JournaledState.over(baseWith(new Map()))
    await s.putAccount(a, new Account(0n, 1n))
    s.expectCreationAt(a)
    expect(s.heldAccount(a)).toBe(NOT_HELD)
    expect(accountNowOrLater(s, a)).toBeInstanceOf(Promise)
  })

  it('reads a state manager that is not a JournaledState through its getAccount', async () => {
    const answer = Promise.resolve(new Account(0n, 3n))
    expect(accountNowOrLater({ getAccount: () => answer }, a)).toBe(answer)
  })
})

describe('JournaledState storage presence (EIP-7610 creation collisions)', () => {
  const T: Address = '0x00000000000000000000000000000000000000cc'
  const t = createAddressFromString(T)
  const b = createAddressFromString(B)

  /** A reader holding a storage-only account T (nonce 0, no code), counting hasStorage questions. */
  function storageOnly(storage: Map<bigint, bigint>) {
    const accounts = new Map<Address, GenesisAccount>([[T, { nonce: 0n, balance: 0n, code: new Uint8Array(0), codeHash: KECCAK256_NULL, storage }]])
    const reader = new MemoryStateReader(EMPTY_STATE_READER.block, accounts)
    const asked: Address[] = []
    const hasStorage = reader.hasStorage.bind(reader)
    reader.hasStorage = (address: Address) => {
      asked.push(address)
      return hasStorage(address)
    }
    return { reader, asked }
  }

  it('reports a non-empty storage root only at a creation target that has storage', async () => {
    const { reader, asked } = storageOnly(new Map([[1n, 1n]]))
    const s = JournaledState.over(reader)
    // ordinary reads: the empty root, and the reader is never asked
    expect((await s.getAccount(t))?.storageRoot).toEqual(KECCAK256_RLP)
    expect(asked).toEqual([])
    s.expectCreationAt(t)
    const target = await s.getAccount(t)
    expect(target).toBeDefined()
    expect(target?.storageRoot).not.toEqual(KECCAK256_RLP)
    expect(asked).toEqual([T])
    // the expectation is used up by that read
    expect((await s.getAccount(t))?.storageRoot).toEqual(KECCAK256_RLP)
    expect(asked).toEqual([T])
  })

  it('the expectation is for the very next account read only', async () => {
    const { reader, asked } = storageOnly(new Map([[1n, 1n]]))
    const s = JournaledState.over(reader)
    s.expectCreationAt(t)
    await s.getAccount(b)
    expect((await s.getAccount(t))?.storageRoot).toEqual(KECCAK256_RLP)
    expect(asked).toEqual([])
  })

  it('a target with a nonce or code collides without the storage question', async () => {
    const { reader, asked } = storageOnly(new Map([[1n, 1n]]))
    const s = JournaledState.over(reader)
    await s.modifyAccountFields(t, { nonce: 1n })
    s.expectCreationAt(t)
    expect((await s.getAccount(t))?.nonce).toBe(1n)
    expect(asked).toEqual([])
  })

  it('an account that does not exist but has storage is reported at a creation target', async () => {
    const accountless = { ...EMPTY_STATE_READER, hasStorage: async (address: Address) => address === T }
    const s = JournaledState.over(accountless)
    expect(await s.getAccount(t)).toBeUndefined()
    s.expectCreationAt(t)
    const target = await s.getAccount(t)
    expect(target?.nonce).toBe(0n)
    expect(target?.codeHash).toEqual(KECCAK256_NULL)
    expect(target?.storageRoot).not.toEqual(KECCAK256_RLP)
    s.expectCreationAt(b)
    expect(await s.getAccount(b)).toBeUndefined()
  })

  it('counts slots written in this overlay and in frozen parents, newest write first', async () => {
    const s = JournaledState.over(EMPTY_STATE_READER)
    expect(await s.hasStorage(T)).toBe(false)
    await s.checkpoint()
    await s.putStorage(t, key(1), val(1))
    expect(await s.hasStorage(T)).toBe(true)
    await s.revert()
    expect(await s.hasStorage(T)).toBe(false)
    await s.putStorage(t, key(1), val(1))
    const child = s.fork()
    expect(await child.hasStorage(T)).toBe(true)
    // a zero written over the parent's slot
    await child.putStorage(t, key(1), new Uint8Array(0))
    expect(await child.hasStorage(T)).toBe(false)
    expect(await s.hasStorage(T)).toBe(true)
  })

  it('a clear hides the storage below it; slots written after the clear count', async () => {
    const { reader } = storageOnly(new Map([[1n, 1n]]))
    const s = JournaledState.over(reader)
    expect(await s.hasStorage(T)).toBe(true)
    await s.clearStorage(t)
    expect(await s.hasStorage(T)).toBe(false)
    const child = s.fork()
    await child.putStorage(t, key(2), val(2))
    expect(await child.hasStorage(T)).toBe(true)
    const other = JournaledState.over(reader)
    await other.deleteAccount(t)
    expect(await other.hasStorage(T)).toBe(false)
  })

  it('a reader without the capability holds no storage; zero-valued slots are no storage', async () => {
    expect(await JournaledState.over(EMPTY_STATE_READER).hasStorage(T)).toBe(false)
    const { reader } = storageOnly(new Map([[1n, 0n]]))
    expect(await JournaledState.over(reader).hasStorage(T)).toBe(false)
  })
})
