/** The venue seam: a deployment's venues, and the kind table every protocol has an entry in. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_V3_FEE_TIERS, dexVenues, POOL_KINDS, poolKind, type PoolProtocol } from '../../src/pools/index.ts'

const V2 = '0x00000000000000000000000000000000000000a2'
const V3 = '0x00000000000000000000000000000000000000a3'
const WETH = '0x00000000000000000000000000000000000000ee'

describe('venues and pool kinds', () => {
  it('turns a deployment into its venues, V2 first, V3 with the default fee tiers unless given', () => {
    expect(dexVenues({ weth: WETH, baseTokens: [], v2Factory: V2, v3Factory: V3 })).toEqual([
      { protocol: 'uniswap-v2', factory: V2 },
      { protocol: 'uniswap-v3', factory: V3, feeTiers: DEFAULT_V3_FEE_TIERS },
    ])
    expect(dexVenues({ weth: WETH, baseTokens: [], v3Factory: V3, v3FeeTiers: [500] })).toEqual([{ protocol: 'uniswap-v3', factory: V3, feeTiers: [500] }])
    expect(dexVenues({ weth: WETH, baseTokens: [] })).toEqual([])
  })

  it('has one kind per protocol, each naming its own protocol', () => {
    for (const protocol of Object.keys(POOL_KINDS) as PoolProtocol[]) expect(poolKind(protocol).protocol).toBe(protocol)
    expect(Object.keys(POOL_KINDS).sort()).toEqual(['uniswap-v2', 'uniswap-v3'])
  })
})
