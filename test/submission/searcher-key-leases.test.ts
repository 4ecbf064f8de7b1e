/**
 * searcherKeyLeases: what planning leases and signs with on the main thread, and what it answers a
 * worker's planning task. A signature only for the holder of a lease, with the key it holds; with a
 * guard, only for a backrun call (this chain, the executor as `to`); leases of built blocks pruned.
 */
import { describe, expect, it } from 'vitest'

import type { Address } from '../../src/chain/types.ts'
import { privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { searcherKeyLeases } from '../../src/submission/searcher-key-leases.ts'
import { SearcherKeyPool } from '../../src/submission/searcher-key-pool.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'

const signer = (n: number) => privateKeyBackrunSigner(`0x${n.toString(16).padStart(64, '0')}`)
const EXECUTOR = '0x00000000000000000000000000000000000e0e0e' as Address
const request = (to: Address = EXECUTOR, chainId = 31337n) => ({
  chainId,
  nonce: 3n,
  to,
  data: '0x1234' as const,
  gasLimit: 200_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
})

describe('searcherKeyLeases', () => {
  it('leases a key per owner and block, signs with the key the owner holds, and gives it back', async () => {
    const pool = new SearcherKeyPool([signer(1), signer(2)])
    const leases = searcherKeyLeases(pool, { chainId: 31337n, executor: EXECUTOR })
    expect(leases.size).toBe(2)
    const a = await leases.lease(100n, 101n, 'a')
    const b = await leases.lease(100n, 101n, 'b')
    expect(a).toBe(pool.signers[0].address)
    expect(b).toBe(pool.signers[1].address)
    expect(await leases.lease(100n, 101n, 'c')).toBeUndefined()
    // the same owner again: the same key
    expect(await leases.lease(100n, 101n, 'b')).toBe(b)
    const raw = await leases.sign(101n, 'b', request())
    const tx = decodeSignedTransaction(raw, { chainId: 31337n, hardfork: 'prague' })
    expect(tx.sender).toBe(b!.toLowerCase())
    expect(tx.nonce).toBe(3n)
    await leases.release(101n, 'b')
    expect(pool.holder(101n, 'b')).toBeUndefined()
    expect(await leases.lease(100n, 101n, 'c')).toBe(b)
  })

  it('signs nothing for an owner without a lease for that block', async () => {
    const pool = new SearcherKeyPool([signer(1)])
    const leases = searcherKeyLeases(pool)
    await leases.lease(100n, 101n, 'a')
    await expect(leases.sign(101n, 'b', request())).rejects.toThrow('b holds no searcher key for block 101')
    await expect(leases.sign(102n, 'a', request())).rejects.toThrow('a holds no searcher key for block 102')
  })

  it('with a guard, signs backrun calls only: this chain, to the executor', async () => {
    const pool = new SearcherKeyPool([signer(1)])
    const leases = searcherKeyLeases(pool, { chainId: 31337n, executor: EXECUTOR })
    await leases.lease(100n, 101n, 'a')
    await expect(leases.sign(101n, 'a', request('0x000000000000000000000000000000000000dead'))).rejects.toThrow(/^a searcher key signs backrun calls only: chain 31337, to 0x0+e0e0e \(asked: chain 31337, to 0x0+dead\)$/)
    await expect(leases.sign(101n, 'a', request(EXECUTOR, 1n))).rejects.toThrow(/asked: chain 1,/)
    await expect(leases.sign(101n, 'a', request())).resolves.toMatch(/^0x02/)
    // the guard's executor in another case is the same executor
    const upper = searcherKeyLeases(pool, { chainId: 31337n, executor: EXECUTOR.toUpperCase().replace('0X', '0x') as Address })
    await expect(upper.sign(101n, 'a', request())).resolves.toMatch(/^0x02/)
  })

  it('a lease prunes the leases of blocks up to the head (they are built)', async () => {
    const pool = new SearcherKeyPool([signer(1)])
    const leases = searcherKeyLeases(pool)
    await leases.lease(100n, 101n, 'a')
    expect(pool.leased(101n)).toBe(1)
    expect(await leases.lease(101n, 102n, 'b')).toBe(pool.signers[0].address)
    expect(pool.leased(101n)).toBe(0)
  })
})
