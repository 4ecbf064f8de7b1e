/**
 * Uniswap V4 pools against the real PoolManager on anvil (the devnet's, from @uniswap/v4-core's
 * out/): the pool state read word by word from storage (src/pools/uniswap-v4.ts, through the fork
 * reader, as the service reads any state) equals what PoolManager.extsload answers for the same
 * slots, at genesis and after swaps that crossed ticks; the ticks found are the registry's
 * position edges (so the slots are the right ones, not merely read alike twice); and the swap math
 * gives, for random exact inputs in both directions of every pool, exactly what PoolSwapTest's swap
 * through unlock returns: native ETH and hooked pools too (the afterSwap counter hook's dynamic-fee
 * pool at slot0's fee; the directional-fee hook's at the fee its beforeSwap returns, which slot0
 * shows for zeroForOne only: the search's estimate is that slot0 fee).
 */
import fc from 'fast-check'
import { createPublicClient, createWalletClient, decodeFunctionResult, encodeFunctionData, http, parseEther, parseUnits, zeroAddress, type Abi, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { foundryArtifact } from '../../scripts/devnet/artifacts.ts'
import { ForkStateSource } from '../../src/chain/fork/index.ts'
import type { Hex } from '../../src/chain/types.ts'
import { MAX_SQRT_RATIO, MIN_SQRT_RATIO } from '../../src/dex/math/index.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import type { V4PoolSnapshot } from '../../src/pools/pools.ts'
import { loadV4Pool, quoteV4, v4KeyZeroForOne, v4PoolRef } from '../../src/pools/uniswap-v4.ts'
import { DIRECTIONAL_FEES } from '../../scripts/devnet/v4-hooks.ts'
import { decodeV4LiquidityNet, decodeV4Slot0, v4LiquiditySlot, v4Slot0Slot, v4TickBitmapSlot, v4TickSlot, type V4PoolKey } from '../../src/pools/uniswap-v4-slots.ts'
import { ViewCaller } from '../../src/pools/view-calls.ts'
import { startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { GENESIS_PATH, loadRegistry, lower } from '../support/devnet.ts'

const registry = loadRegistry()
const POOL_MANAGER = foundryArtifact('@uniswap/v4-core', 'PoolManager').abi
const POOL_SWAP_TEST = foundryArtifact('@uniswap/v4-core', 'PoolSwapTest').abi
const poolManager = lower(registry.v4.poolManager)
const poolSwapTest = lower(registry.v4.poolSwapTest)
/** enough words to hold every position of every devnet pool (tick spacing 1: ±8,192 ticks) */
const WIDE = { wordsPerSide: () => 32 }

const keyOf = (p: (typeof registry.v4.pools)[number]): V4PoolKey => ({
  currency0: lower(p.currency0),
  currency1: lower(p.currency1),
  fee: p.fee,
  tickSpacing: p.tickSpacing,
  hooks: lower(p.hooks),
})
const decimalsOf = (currency: string) => (currency === zeroAddress ? 18 : registry.tokens.find((t) => lower(t.address) === lower(currency))!.decimals)
/** what each dev account holds of a currency at genesis, in whole units (registry devAccounts.balances) */
const wholeBalance = (currency: string) => {
  const symbol = currency === zeroAddress ? 'ETH' : registry.tokens.find((t) => lower(t.address) === lower(currency))!.symbol
  const balances = (registry as unknown as { devAccounts: { balances: Record<string, string> } }).devAccounts.balances
  return BigInt(balances[symbol]!) / 10n ** BigInt(decimalsOf(currency))
}

describe('Uniswap V4 pools against the PoolManager on anvil', () => {
  let anvil: AnvilInstance
  let client: PublicClient
  const sim = new Simulator({ common: commonForChain(BigInt(registry.chainId)) })

  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    client = createPublicClient({ transport: http(anvil.url) })
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  async function snapshots(blockNumber: bigint): Promise<V4PoolSnapshot[]> {
    const source = await ForkStateSource.create({ url: anvil.url, blockNumber })
    try {
      const caller = new ViewCaller(sim, source.latest())
      return await Promise.all(registry.v4.pools.map((p) => loadV4Pool(caller, v4PoolRef(poolManager, keyOf(p), registry.v4.name, lower(registry.weth)), WIDE)))
    } finally {
      await source.close()
    }
  }

  const extsload = async (slot: Hex, blockNumber: bigint) =>
    BigInt(await client.readContract({ address: poolManager, abi: POOL_MANAGER, functionName: 'extsload', args: [slot], blockNumber }) as Hex)

  async function expectEqualsExtsload(pool: V4PoolSnapshot, blockNumber: bigint): Promise<void> {
    const slot0 = decodeV4Slot0(await extsload(v4Slot0Slot(pool.address), blockNumber))
    expect(pool.slot0, pool.address).toEqual(slot0)
    expect(pool.state.liquidity).toBe((await extsload(v4LiquiditySlot(pool.address), blockNumber)) & ((1n << 128n) - 1n))
    for (let w = pool.coverage.wordLower; w <= pool.coverage.wordUpper; w++) {
      expect(pool.state.bitmap.get(w) ?? 0n, `word ${w}`).toBe(await extsload(v4TickBitmapSlot(pool.address, w), blockNumber))
    }
    for (const [tick, info] of pool.state.ticks) {
      expect(info.liquidityNet, `tick ${tick}`).toBe(decodeV4LiquidityNet(await extsload(v4TickSlot(pool.address, tick), blockNumber)))
    }
  }

  it('reads at genesis what extsload answers, and the registry\'s positions: their edges are the initialized ticks', async () => {
    const pools = await snapshots(0n)
    for (const [i, pool] of pools.entries()) {
      const recorded = registry.v4.pools[i]!
      await expectEqualsExtsload(pool, 0n)
      expect([pool.state.sqrtPriceX96, pool.state.tick, pool.state.liquidity, pool.slot0.lpFee]).toEqual([BigInt(recorded.sqrtPriceX96), recorded.tick, BigInt(recorded.liquidity), recorded.lpFee])
      const edges = [...new Set(recorded.positions.flatMap((p) => [p.tickLower, p.tickUpper]))].sort((a, b) => a - b)
      expect([...pool.state.ticks.keys()].sort((a, b) => a - b), recorded.name).toEqual(edges)
      // liquidityNet: + at each lower edge, - at each upper edge
      for (const tick of edges) {
        const net = recorded.positions.reduce((n, p) => n + (p.tickLower === tick ? BigInt(p.liquidity) : 0n) - (p.tickUpper === tick ? BigInt(p.liquidity) : 0n), 0n)
        expect(pool.state.ticks.get(tick)!.liquidityNet, `${recorded.name} tick ${tick}`).toBe(net)
      }
    }
  })

  it('quotes exactly what PoolSwapTest.swap returns, random exact inputs in both directions of every pool', async () => {
    const pools = await snapshots(0n)
    const sender = lower(registry.devAccounts.accounts[47]!.address)
    let compared = 0
    let partial = 0
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: pools.length - 1 }),
        fc.boolean(),
        fc.bigInt({ min: 1n, max: 999n }),
        fc.integer({ min: 2, max: 30 }),
        async (i, zeroForOne, mantissa, exponent) => {
          const pool = pools[i]!
          const currencyIn = zeroForOne ? pool.key.currency0 : pool.key.currency1
          const cap = wholeBalance(currencyIn) * 10n ** BigInt(decimalsOf(currencyIn))
          const amountIn = [mantissa * 10n ** BigInt(exponent)].map((a) => (a > cap ? cap : a))[0]!
          const data = encodeFunctionData({
            abi: POOL_SWAP_TEST,
            functionName: 'swap',
            args: [pool.key, { zeroForOne, amountSpecified: -amountIn, sqrtPriceLimitX96: zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n }, { takeClaims: false, settleUsingBurn: false }, '0x'],
          })
          const value = currencyIn === zeroAddress ? amountIn : 0n
          const { data: out } = await client.call({ account: sender, to: poolSwapTest, data, value, blockNumber: 0n })
          const delta = decodeFunctionResult({ abi: POOL_SWAP_TEST, functionName: 'swap', data: out! }) as bigint
          const [amount0, amount1] = [delta >> 128n, BigInt.asIntN(128, delta)]
          const [paid, received] = zeroForOne ? [-amount0, amount1] : [-amount1, amount0]
          // quoteV4 takes the route's direction (a native pool's tokens sort WETH's way); the
          // directional-fee hook's pool charges its beforeSwap fee, which slot0 shows for zeroForOne only
          const hookFee = pool.hookAltersSwap ? (zeroForOne ? DIRECTIONAL_FEES.zeroForOne : DIRECTIONAL_FEES.oneForZero) : pool.slot0.lpFee
          const quote = quoteV4({ ...pool, slot0: { ...pool.slot0, lpFee: hookFee } }, v4KeyZeroForOne(pool, zeroForOne), amountIn)
          if (quote === undefined) {
            // the pool ran out of liquidity (every position is loaded) or the output rounds to zero
            expect(paid < amountIn || received === 0n, `${i} ${zeroForOne} ${amountIn}`).toBe(true)
            partial++
            return
          }
          expect([paid, received], `pool ${i} zeroForOne ${zeroForOne} amountIn ${amountIn}`).toEqual([amountIn, quote.amountOut])
          compared++
        },
      ),
      { numRuns: 160, seed: 415 },
    )
    expect(compared).toBeGreaterThan(90)
    expect(partial + compared).toBe(160)
  }, 120_000)

  it('quotes exactly with a protocol fee on, different in each direction (set by the owner\'s fee controller)', async () => {
    const owner = privateKeyToAccount((registry as unknown as { deployer: { privateKey: Hex } }).deployer.privateKey)
    const controller = privateKeyToAccount(registry.devAccounts.accounts[52]!.privateKey)
    const send = async (account: typeof owner, functionName: string, args: readonly unknown[]) => {
      const wallet = createWalletClient({ account, transport: http(anvil.url) })
      const hash = await wallet.writeContract({ chain: null, address: poolManager, abi: POOL_MANAGER as Abi, functionName, args, gas: 500_000n })
      expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success')
    }
    const pool0 = (await snapshots(await client.getBlockNumber({ cacheTime: 0 })))[0]!
    await send(owner, 'setProtocolFeeController', [controller.address])
    // 0.05% protocol fee zeroForOne, 0.1% oneForZero (the maximum), on the 0.3% pool
    await send(controller, 'setProtocolFee', [pool0.key, 500 | (1000 << 12)])
    const head = await client.getBlockNumber({ cacheTime: 0 })
    const pool = (await snapshots(head))[0]!
    expect(pool.slot0.protocolFee).toBe(500 | (1000 << 12))
    const sender = lower(registry.devAccounts.accounts[53]!.address)
    for (const zeroForOne of [true, false]) {
      for (const amountIn of zeroForOne ? [1_000_000n, 12_345_678_901n, 300_000_000_000n] : [10n ** 15n, 3n * 10n ** 18n, 77n * 10n ** 18n]) {
        const data = encodeFunctionData({
          abi: POOL_SWAP_TEST,
          functionName: 'swap',
          args: [pool.key, { zeroForOne, amountSpecified: -amountIn, sqrtPriceLimitX96: zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n }, { takeClaims: false, settleUsingBurn: false }, '0x'],
        })
        const { data: out } = await client.call({ account: sender, to: poolSwapTest, data, blockNumber: head })
        const delta = decodeFunctionResult({ abi: POOL_SWAP_TEST, functionName: 'swap', data: out! }) as bigint
        const received = zeroForOne ? BigInt.asIntN(128, delta) : delta >> 128n
        expect(quoteV4(pool, zeroForOne, amountIn)?.amountOut, `${zeroForOne} ${amountIn}`).toBe(received)
        // and the LP fee alone would have given more: the protocol fee is charged
        expect(quoteV4({ ...pool, slot0: { ...pool.slot0, protocolFee: 0 } }, zeroForOne, amountIn)!.amountOut).toBeGreaterThan(received)
      }
    }
  }, 120_000)

  it('reads what extsload answers after swaps that crossed ticks', async () => {
    const swaps: Array<{ pool: number; zeroForOne: boolean; amount: string; account: number }> = [
      // every pool, both ways, sized to cross the inner positions' edges
      { pool: 0, zeroForOne: true, amount: '900000', account: 47 },
      { pool: 1, zeroForOne: false, amount: '900000', account: 48 },
      { pool: 2, zeroForOne: true, amount: '15', account: 49 },
      { pool: 3, zeroForOne: false, amount: '900000', account: 50 },
      { pool: 4, zeroForOne: true, amount: '200', account: 51 },
      { pool: 5, zeroForOne: false, amount: '50000', account: 53 },
      { pool: 6, zeroForOne: false, amount: '50000', account: 46 },
    ]
    const before = await snapshots(0n)
    for (const s of swaps) {
      const pool = before[s.pool]!
      const currencyIn = s.zeroForOne ? pool.key.currency0 : pool.key.currency1
      const amountIn = currencyIn === zeroAddress ? parseEther(s.amount) : parseUnits(s.amount, decimalsOf(currencyIn))
      const account = privateKeyToAccount(registry.devAccounts.accounts[s.account]!.privateKey)
      const wallet = createWalletClient({ account, transport: http(anvil.url) })
      const hash = await wallet.writeContract({
        chain: null,
        address: poolSwapTest,
        abi: POOL_SWAP_TEST as Abi,
        functionName: 'swap',
        args: [pool.key, { zeroForOne: s.zeroForOne, amountSpecified: -amountIn, sqrtPriceLimitX96: s.zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n }, { takeClaims: false, settleUsingBurn: false }, '0x'],
        value: currencyIn === zeroAddress ? amountIn : 0n,
        gas: 1_000_000n,
      })
      expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success')
    }
    const head = await client.getBlockNumber({ cacheTime: 0 })
    const after = await snapshots(head)
    for (const [i, pool] of after.entries()) {
      await expectEqualsExtsload(pool, head)
      // the swap moved it past at least one initialized tick: the in-range liquidity changed
      expect(pool.state.liquidity, registry.v4.pools[i]!.name).not.toBe(before[i]!.state.liquidity)
      expect(pool.state.tick).not.toBe(before[i]!.state.tick)
    }
  }, 120_000)
})

