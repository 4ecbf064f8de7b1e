/** The kind table every protocol has an entry in (venues as data: venues.test.ts). */
import { describe, expect, it } from 'vitest'
import { POOL_KINDS, poolKind, type PoolProtocol } from '../../src/pools/index.ts'

describe('pool kinds', () => {
  it('has one kind per protocol, each naming its own protocol', () => {
    for (const protocol of Object.keys(POOL_KINDS) as PoolProtocol[]) expect(poolKind(protocol).protocol).toBe(protocol)
    expect(Object.keys(POOL_KINDS).sort()).toEqual(['uniswap-v2', 'uniswap-v3', 'uniswap-v4'])
  })
})
