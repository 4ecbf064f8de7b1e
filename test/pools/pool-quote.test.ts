/**
 * pool-quote.ts's remembering hop quoter (what one route search quotes its paths with): it answers
 * exactly what quoteHop answers, per pool, direction and amount (the two directions of one pool
 * with one amount are different answers), including "cannot take it" (undefined), and a path
 * quoted through it is the path quoted without it.
 */
import { describe, expect, it } from 'vitest'
import { quoteHop, quotePath, rememberingHopQuoter } from '../../src/pools/pool-quote.ts'
import { tok, v2Pool, v3Pool } from '../routing/helpers.ts'

describe('rememberingHopQuoter', () => {
  const weth = tok('WETH')
  const usdc = tok('USDC')
  const dai = tok('DAI')
  const v2 = v2Pool(weth, usdc, 1_000n * 10n ** 18n, 3_000_000n * 10n ** 6n)
  const v3 = v3Pool(usdc, dai, 500, 10, 0, [[-1_000, 1_000, 10n ** 18n]])

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
