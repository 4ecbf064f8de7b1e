/**
 * pool-quote.ts's remembering hop quoter (what one route search quotes its paths with): it answers
 * exactly what quoteHop answers, per pool, direction and amount (the two directions of one pool
 * with one amount are different answers), including "cannot take it" (undefined), and a path
 * quoted through it is the path quoted without it.
 */
import { describe, expect, it } from 'vitest'
import { quoteHop, quotePath, rememberingHopQuoter, type HopQuoter, type PathHop } from '../../src/pools/pool-quote.ts'
import type { PoolSnapshot } from '../../src/pools/pools.ts'
import type { Address } from '../../src/chain/types.ts'
import { tok, v2Pool, v3Pool } from '../routing/helpers.ts'

const weth = tok('WETH')
const usdc = tok('USDC')
const dai = tok('DAI')
const v2 = v2Pool(weth, usdc, 1_000n * 10n ** 18n, 3_000_000n * 10n ** 6n)
const v3 = v3Pool(usdc, dai, 500, 10, 0, [[-1_000, 1_000, 10n ** 18n]])

describe('rememberingHopQuoter', () => {

  it('answers what quoteHop answers, per direction and amount, asked once or again', () => {
    const remembering = rememberingHopQuoter()
    for (let round = 0; round < 2; round++) {
      for (const pool of [v2, v3]) {
        for (const zeroForOne of [true, false]) {
          for (const amount of [1n, 10n ** 6n, 10n ** 18n, 10n ** 40n]) {
            expect(remembering(pool, zeroForOne, amount), `${pool.protocol} ${zeroForOne} ${amount}`).toEqual(quoteHop(pool, zeroForOne, amount))
          }
        }
      }
    }
    expect(remembering(v2, true, 10n ** 18n)).not.toEqual(remembering(v2, false, 10n ** 18n))
    expect(remembering(v3, true, 10n ** 40n)).toBeUndefined() // past the loaded liquidity
  })

  it('quotes a path as quotePath does without it', () => {
    const remembering = rememberingHopQuoter()
    const zeroForOne = (pool: { token0: string }, tokenIn: string) => pool.token0 === tokenIn
    const path = [
      { pool: v2, tokenIn: weth, tokenOut: usdc, zeroForOne: zeroForOne(v2, weth) },
      { pool: v3, tokenIn: usdc, tokenOut: dai, zeroForOne: zeroForOne(v3, usdc) },
    ]
    for (const amount of [10n ** 15n, 10n ** 17n, 10n ** 15n]) expect(quotePath(path, amount, remembering)).toEqual(quotePath(path, amount))
  })
})

describe('quotePath with a quoter of its own for the last hop', () => {
  const v2b = v2Pool(dai, weth, 3_000_000n * 10n ** 18n, 1_000n * 10n ** 18n)
  const hop = (pool: PoolSnapshot, tokenIn: Address, tokenOut: Address): PathHop => ({ pool, tokenIn, tokenOut, zeroForOne: pool.token0 === tokenIn })

  it('asks it the last hop only, and the other quoter every hop before it, for the same answer', () => {
    for (const path of [[hop(v2, weth, usdc)], [hop(v2, weth, usdc), hop(v3, usdc, dai)], [hop(v2, weth, usdc), hop(v3, usdc, dai), hop(v2b, dai, weth)]]) {
      const asked: string[] = []
      const noting = (name: string): HopQuoter => (pool, zeroForOne, amount) => (asked.push(`${name}:${pool.address}`), quoteHop(pool, zeroForOne, amount))
      const q = quotePath(path, 10n ** 16n, noting('memo'), noting('last'))
      expect(q).toEqual(quotePath(path, 10n ** 16n))
      expect(q).toBeDefined()
      expect(asked).toEqual(path.map((h, i) => `${i === path.length - 1 ? 'last' : 'memo'}:${h.pool.address}`))
    }
  })
})
