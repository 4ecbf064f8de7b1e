import { describe, expect, it } from 'vitest'
import { keccak256 } from 'viem'
import { accountKey, codeHashHex, KECCAK256_NULL_HEX, StateCache, storageKey, storagePresenceKey } from '../../../src/chain/fork/state-cache.ts'
import type { Address } from '../../../src/chain/types.ts'

const addr = (i: number): Address => `0x${i.toString(16).padStart(40, '0')}`

describe('StateCache bounds', () => {
  it('never holds more state entries than maxEntries, nor more approximate bytes than maxBytes', () => {
    const byCount = new StateCache({ maxEntries: 50 })
    const byBytes = new StateCache({ maxBytes: 10_000 })
    for (let i = 0; i < 500; i++) {
      for (const cache of [byCount, byBytes]) {
        if (i % 3 === 0) cache.setAccount(accountKey(1n, addr(i)), { exists: true, nonce: 1n, balance: 2n, codeHash: KECCAK256_NULL_HEX })
        else cache.setStorage(storageKey(1n, addr(i), BigInt(i)), BigInt(i))
      }
      expect(byCount.stats().stateEntries).toBeLessThanOrEqual(50)
      expect(byBytes.stats().stateBytes).toBeLessThanOrEqual(10_000)
    }
    expect(byCount.stats().stateEntries).toBe(50)
    expect(byCount.getStorage(storageKey(1n, addr(499), 499n))).toBe(499n)
    expect(byCount.getStorage(storageKey(1n, addr(1), 1n))).toBeUndefined()
  })

  it('drops the accounts, storage and presence of blocks more than maxBlocks behind the head, and nothing newer', () => {
    const cache = new StateCache({ maxBlocks: 3 })
    const account = { exists: true, nonce: 1n, balance: 2n, codeHash: KECCAK256_NULL_HEX }
    for (let block = 1n; block <= 10n; block++) {
      cache.setAccount(accountKey(block, addr(1)), account)
      cache.setStorage(storageKey(block, addr(1), 7n), block)
      cache.setStoragePresence(storagePresenceKey(block, addr(1)), true)
      // a key set again is listed once
      cache.setStorage(storageKey(block, addr(1), 7n), block)
      expect(cache.dropBlocksBelow(block)).toBe(block > 3n ? 3 : 0)
      // what a chain following its head keeps: the newest maxBlocks blocks' reads
      expect(cache.stats().stateEntries).toBe(3 * Number(block < 3n ? block : 3n))
    }
    expect(cache.getStorage(storageKey(7n, addr(1), 7n))).toBeUndefined()
    for (const block of [8n, 9n, 10n]) {
      expect(cache.getStorage(storageKey(block, addr(1), 7n))).toBe(block)
      expect(cache.getAccount(accountKey(block, addr(1)))).toEqual(account)
      expect(cache.getStoragePresence(storagePresenceKey(block, addr(1)))).toBe(true)
    }
  })

  it('keeps every block with maxBlocks 0 (bounded by entries only), and refuses a negative bound', () => {
    const cache = new StateCache({ maxBlocks: 0 })
    for (let block = 1n; block <= 10n; block++) {
      cache.setStorage(storageKey(block, addr(1), 7n), block)
      expect(cache.dropBlocksBelow(block)).toBe(0)
    }
    expect(cache.stats().stateEntries).toBe(10)
    expect(() => new StateCache({ maxBlocks: -1 })).toThrow(RangeError)
    expect(new StateCache().maxBlocks).toBe(64)
  })

  it('bounds code by bytes and keys it by hash, across blocks', () => {
    const cache = new StateCache({ maxCodeBytes: 5_000 })
    for (let i = 0; i < 20; i++) {
      const code = new Uint8Array(1_000).fill(i + 1)
      cache.setCode(codeHashHex(code), code)
      expect(cache.stats().codeBytes).toBeLessThanOrEqual(5_000)
    }
    const last = new Uint8Array(1_000).fill(20)
    expect(cache.getCode(codeHashHex(last))).toEqual(last)
    expect(cache.getCode(KECCAK256_NULL_HEX)).toEqual(new Uint8Array(0))
  })

  it('codeHashHex equals viem keccak256', () => {
    const code = new Uint8Array([0x60, 0x01, 0x60, 0x00, 0xf3])
    expect(codeHashHex(code)).toBe(keccak256(code))
  })

  it('known code applies only at or after the block it was seen at', () => {
    const cache = new StateCache()
    cache.rememberCode(addr(1), KECCAK256_NULL_HEX, 100n)
    expect(cache.knownCode(addr(1), 99n)).toBeUndefined()
    expect(cache.knownCode(addr(1), 100n)?.sinceBlock).toBe(100n)
    cache.rememberCode(addr(1), KECCAK256_NULL_HEX, 90n)
    expect(cache.knownCode(addr(1), 95n)?.sinceBlock).toBe(90n)
  })
})
