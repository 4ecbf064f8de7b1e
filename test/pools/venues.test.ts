/**
 * Venues as data: the VENUES list and its checks, the mainnet defaults (they derive the real
 * mainnet pools' addresses), and the one-venue shorthand.
 */
import { zeroAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import {
  MAINNET_VENUES,
  MAX_V4_POOLS_PER_VENUE,
  MAX_VENUES_PER_KIND,
  parseVenues,
  uniswapV2Venue,
  VenueListError,
  venueJson,
  venuePoolAddress,
  PoolAddressMemo,
  type V2Venue,
  type V3Venue,
  type Venue,
} from '../../src/pools/index.ts'

const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' as Address
/** a hook contract address whose low 14 bits are `flags` (v4-core Hooks: the permissions) */
const hookAt = (flags: number) => `0x${'ab'.repeat(18)}${(0xc000 | flags).toString(16)}` as Address
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2' as Address

function named(name: string): V2Venue | V3Venue {
  const v = MAINNET_VENUES.find((x) => x.name === name)
  if (!v || v.protocol === 'uniswap-v4') throw new Error(`no V2 or V3 venue ${name}`)
  return v
}

function problemsOf(text: string): string[] {
  try {
    parseVenues(text)
  } catch (err) {
    if (err instanceof VenueListError) return err.problems
    throw err
  }
  throw new Error('parsed')
}

const factoryAt = (i: number) => `0x${i.toString(16).padStart(40, '0')}` as Address

describe('venues', () => {
  it('mainnet defaults: Uniswap, Sushi and Pancake, V2 and V3, each deriving its real USDC/WETH pool', () => {
    expect(MAINNET_VENUES.map((v) => v.name)).toEqual(['uniswap-v2', 'sushiswap-v2', 'pancakeswap-v2', 'uniswap-v3', 'sushiswap-v3', 'pancakeswap-v3'])
    // addresses as Etherscan lists them: the pairs and pools every aggregator routes through
    expect(venuePoolAddress(named('uniswap-v2'), USDC, WETH)).toBe('0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc')
    expect(venuePoolAddress(named('sushiswap-v2'), USDC, WETH)).toBe('0x397ff1542f962076d0bfe58ea045ffa2d347aca0')
    expect(venuePoolAddress(named('uniswap-v3'), USDC, WETH, 500)).toBe('0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640')
    expect(venuePoolAddress(named('uniswap-v3'), USDC, WETH, 3000)).toBe('0x8ad599c3a0ff1de082011efddc58f1908eb6e6d8')
    const pancakeV2 = named('pancakeswap-v2')
    expect(pancakeV2.protocol === 'uniswap-v2' && pancakeV2.feeBps).toBe(25)
    const pancakeV3 = named('pancakeswap-v3')
    // its pools are CREATE2-deployed by the PoolDeployer, not by the factory discovery asks
    expect(pancakeV3.protocol === 'uniswap-v3' && pancakeV3.poolDeployer).not.toBe(pancakeV3.factory)
    expect(pancakeV3.protocol === 'uniswap-v3' && pancakeV3.callback).toBe('pancakeV3SwapCallback')
  })

  it('pool addresses are memoized within a bound: the same CREATE2 addresses, asked again or after the memo starts over', () => {
    const memo = new PoolAddressMemo(2)
    const asks: Array<[V2Venue | V3Venue, number | undefined, string]> = [
      [named('uniswap-v2'), undefined, '0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc'],
      [named('uniswap-v3'), 500, '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640'],
      [named('uniswap-v3'), 3000, '0x8ad599c3a0ff1de082011efddc58f1908eb6e6d8'],
      [named('sushiswap-v2'), undefined, '0x397ff1542f962076d0bfe58ea045ffa2d347aca0'],
    ]
    for (let round = 0; round < 2; round++) {
      for (const [venue, fee, expected] of asks) {
        expect(memo.address(venue, USDC, WETH, fee)).toBe(expected)
        expect(memo.size).toBeLessThanOrEqual(2)
      }
    }
    // the fee is part of the key: one venue, two tiers, two pools
    expect(new Set(asks.map(([venue, fee]) => memo.address(venue, USDC, WETH, fee))).size).toBe(4)
    expect(() => new PoolAddressMemo(0)).toThrow(RangeError)
  })

  it('parses VENUES=mainnet and the JSON form, which round-trips through venueJson', () => {
    expect(parseVenues('mainnet')).toEqual(MAINNET_VENUES)
    expect(parseVenues(JSON.stringify(MAINNET_VENUES.map(venueJson)))).toEqual(MAINNET_VENUES)
  })

  it('defaults the callbacks to Uniswap’s and the pool deployer to the factory', () => {
    const [v2, v3] = parseVenues(
      JSON.stringify([
        { kind: 'v2', name: 'a', factory: `0x${'11'.repeat(20)}`, initCodeHash: `0x${'22'.repeat(32)}`, feeBps: 20 },
        { kind: 'v3', name: 'b', factory: `0x${'33'.repeat(20)}`, initCodeHash: `0x${'44'.repeat(32)}`, feeTiers: [500], tickSpacings: [10] },
      ]),
    )
    expect(v2).toMatchObject({ protocol: 'uniswap-v2', feeBps: 20, callback: 'uniswapV2Call' })
    expect(v3).toMatchObject({ protocol: 'uniswap-v3', poolDeployer: `0x${'33'.repeat(20)}`, callback: 'uniswapV3SwapCallback' })
  })

  it('names every problem: fields, kinds, callbacks our contracts lack, duplicates, more venues than the contracts hold', () => {
    expect(problemsOf('{')).toEqual(['expected "mainnet" or a JSON array of venues'])
    expect(problemsOf('[]')).toEqual(['at least one venue is needed'])
    const bad = problemsOf(
      JSON.stringify([
        { kind: 'v4', name: 'x', factory: `0x${'11'.repeat(20)}`, initCodeHash: `0x${'22'.repeat(32)}` },
        { kind: 'v2', name: 'Bad Name', factory: '0x12', initCodeHash: '0x34', feeBps: 10_000, callback: 'hook' },
        { kind: 'v3', name: 'y', factory: `0x${'11'.repeat(20)}`, initCodeHash: `0x${'22'.repeat(32)}`, feeTiers: [500, 500], tickSpacings: [10] },
      ]),
    )
    expect(bad).toEqual([
      '[0].poolManager: expected a 0x-prefixed 20-byte address',
      '[0].poolKeys: expected 1 to 256 pool keys',
      '[1].name: expected 1-40 characters of a-z 0-9 . _ -',
      '[1].factory: expected a 0x-prefixed 20-byte address',
      '[1].initCodeHash: expected a 0x-prefixed 32-byte hash',
      '[1].feeBps: expected an integer 0..9999 (basis points)',
      '[1].callback: expected one of uniswapV2Call, pancakeCall (the callbacks our contracts implement)',
      '[2].tickSpacings: one per fee tier (2)',
      '[2].feeTiers: a tier is listed twice',
    ])
    const factory = (i: number) => `0x${i.toString(16).padStart(40, '0')}` as Address
    const many = Array.from({ length: MAX_VENUES_PER_KIND + 1 }, (_, i) => venueJson(uniswapV2Venue(factory(i + 1), `v2-${i}`)))
    expect(problemsOf(JSON.stringify(many))).toEqual([`5 v2 venues: the contracts hold at most ${MAX_VENUES_PER_KIND} per kind`])
    const twice = [venueJson(uniswapV2Venue(factory(1))), venueJson(uniswapV2Venue(factory(1)))]
    expect(problemsOf(JSON.stringify(twice))).toEqual(['venue name uniswap-v2 is used twice', `factory ${factory(1)} is listed twice`])
    expect(problemsOf(JSON.stringify([{ kind: 'v5', name: 'z', factory: factoryAt(1), initCodeHash: `0x${'22'.repeat(32)}` }]))).toEqual(['[0].kind: expected "v2", "v3" or "v4"'])
  })

  it('parses a V4 venue (PoolManager and pool keys): static and dynamic fees, hooks, native ETH as currency0', () => {
    const key = { currency0: factoryAt(1), currency1: factoryAt(2), fee: 1200, tickSpacing: 24 }
    const venue = { kind: 'v4', name: 'uniswap-v4', poolManager: factoryAt(9), poolKeys: [key] }
    const [parsed] = parseVenues(JSON.stringify([venue]))
    expect(parsed).toEqual({ protocol: 'uniswap-v4', name: 'uniswap-v4', poolManager: factoryAt(9), pools: [{ ...key, hooks: zeroAddress }] })
    expect(parseVenues(JSON.stringify([venueJson(parsed!)]))).toEqual([parsed])
    const keys = [
      // an afterSwap-only hook with a dynamic fee, a beforeSwap + beforeSwapReturnDelta hook with a static fee, native ETH
      { ...key, fee: 0x800000, hooks: hookAt(0x0040) },
      { ...key, hooks: hookAt(0x0088) },
      { ...key, currency0: zeroAddress },
      // a hook with no permission bits is valid with a dynamic fee (it only sets the fee)
      { ...key, fee: 0x800000, hooks: hookAt(0) },
    ]
    const [withHooks] = parseVenues(JSON.stringify([{ ...venue, poolKeys: keys }]))
    expect(withHooks).toEqual({ protocol: 'uniswap-v4', name: 'uniswap-v4', poolManager: factoryAt(9), pools: keys.map((k) => ({ hooks: zeroAddress, ...k })) })
  })

  it('refuses V4 pool keys the PoolManager would refuse: dynamic fee without hooks, invalid hook permission bits, native ETH as currency1, bad fee or spacing, more than one PoolManager', () => {
    const key = { currency0: factoryAt(1), currency1: factoryAt(2), fee: 1200, tickSpacing: 24 }
    const venue = { kind: 'v4', name: 'uniswap-v4', poolManager: factoryAt(9), poolKeys: [key] }
    const bad = problemsOf(
      JSON.stringify([
        {
          ...venue,
          poolKeys: [
            { ...key, fee: 0x800000 },
            { ...key, hooks: hookAt(0x0008) },
            { ...key, hooks: hookAt(0x0004) },
            { ...key, hooks: hookAt(0x0002) },
            { ...key, hooks: hookAt(0x0001) },
            { ...key, hooks: hookAt(0) },
            { ...key, currency0: factoryAt(3) },
            { ...key, currency0: zeroAddress, currency1: zeroAddress },
            { ...key, fee: 1_000_000 },
            { ...key, fee: 0x400000 },
            { ...key, tickSpacing: 0 },
          ],
        },
      ]),
    )
    expect(bad).toEqual([
      '[0].poolKeys[0].hooks: a dynamic fee needs a hook contract',
      '[0].poolKeys[1].hooks: the beforeSwapReturnDelta permission needs beforeSwap (the address\'s low bits)',
      '[0].poolKeys[2].hooks: the afterSwapReturnDelta permission needs afterSwap (the address\'s low bits)',
      '[0].poolKeys[3].hooks: the afterAddLiquidityReturnDelta permission needs afterAddLiquidity (the address\'s low bits)',
      '[0].poolKeys[4].hooks: the afterRemoveLiquidityReturnDelta permission needs afterRemoveLiquidity (the address\'s low bits)',
      '[0].poolKeys[5].hooks: a hook contract with no permission bits needs a dynamic fee',
      '[0].poolKeys[6]: currency0 must be below currency1',
      '[0].poolKeys[7]: currency0 must be below currency1',
      '[0].poolKeys[7].currency1: native ETH (address(0)) can only be currency0',
      '[0].poolKeys[8].fee: expected a static LP fee in pips (an integer 0..999999) or 8388608 (0x800000, a dynamic fee)',
      '[0].poolKeys[9].fee: expected a static LP fee in pips (an integer 0..999999) or 8388608 (0x800000, a dynamic fee)',
      '[0].poolKeys[10].tickSpacing: expected an integer 1..32767',
    ])
    expect(problemsOf(JSON.stringify([venue, { ...venue, name: 'second', poolManager: factoryAt(8) }]))).toEqual(['2 v4 venues: SwapPlanRouter holds one PoolManager'])
    const tooMany = Array.from({ length: MAX_V4_POOLS_PER_VENUE + 1 }, (_, i) => ({ ...key, fee: i }))
    expect(problemsOf(JSON.stringify([{ ...venue, poolKeys: tooMany }]))).toEqual([`[0].poolKeys: expected 1 to ${MAX_V4_POOLS_PER_VENUE} pool keys`])
  })
})
