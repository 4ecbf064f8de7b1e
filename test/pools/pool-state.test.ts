/**
 * Pool state loaded with view calls, checked against the chain's own quoters: on every devnet V3
 * pool, for amounts from 1 unit to past all liquidity in both directions, the loaded snapshot gives
 * exactly QuoterV2's amountOut, sqrtPriceX96After and initializedTicksCrossed; every V2 pair gives
 * exactly Router02.getAmountsOut, one hop and two. The loaded range is marked and never trusted
 * beyond.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { describe, expect, it } from 'vitest'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address, StateReader } from '../../src/chain/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { GENESIS_PATH, loadFixtureTxs } from '../support/devnet.ts'
import { countInitializedTicksCrossed, getSqrtRatioAtTick, MAX_TICK, MIN_TICK, quoteExactInputSingle, simulateV3Swap } from '../../src/dex/math/index.ts'
import {
  PoolDiscovery,
  PoolStateLoader,
  ViewCaller,
  quotePath,
  quoteV2,
  quoteV3,
  tickCoverage,
  VIEW_CALLER,
  type PathHop,
  type PoolRef,
  type PoolSnapshot,
  type V2PoolSnapshot,
  type V3PoolSnapshot,
} from '../../src/pools/index.ts'
import { DEX, E18, lower, registry, sim, source, tok } from '../routing/helpers.ts'

const QUOTER_V2_ABI = parseAbi([
  'function quoteExactInputSingle((address tokenIn, address tokenOut, uint256 amountIn, uint24 fee, uint160 sqrtPriceLimitX96) params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
])
const ROUTER02_ABI = parseAbi(['function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)'])

const v3Refs: PoolRef[] = registry.v3.pools.map((p) => ({ protocol: 'uniswap-v3', address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: p.fee, venue: 'uniswap-v3' }))
const v2Refs: PoolRef[] = registry.v2.pairs.map((p) => ({ protocol: 'uniswap-v2', address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: 3000, venue: 'uniswap-v2' }))

const loader = new PoolStateLoader(sim)
const V2_USDC_WETH: Address = '0xe421afd0eb5c3a190448b9b76622d65104935813'
/** every bitmap word of the pool, MIN_TICK to MAX_TICK: nothing left unknown */
const fullLoader = new PoolStateLoader(sim, { tickWindow: 2 * MAX_TICK, maxWordsPerSide: 100_000 })

type QuoterAnswer = { status: 'success'; amountOut: bigint; sqrtPriceX96After: bigint; initializedTicksCrossed: number } | { status: 'reverted' }

async function quoterV2(tokenIn: Address, tokenOut: Address, fee: number, amountIn: bigint): Promise<QuoterAnswer> {
  const data = encodeFunctionData({ abi: QUOTER_V2_ABI, functionName: 'quoteExactInputSingle', args: [{ tokenIn, tokenOut, amountIn, fee, sqrtPriceLimitX96: 0n }] })
  const r = await sim.call(sim.openState(source.latest()), { from: VIEW_CALLER, to: lower(registry.v3.quoterV2), data })
  if (r.status !== 'success') return { status: 'reverted' }
  const [amountOut, sqrtPriceX96After, initializedTicksCrossed] = decodeFunctionResult({ abi: QUOTER_V2_ABI, functionName: 'quoteExactInputSingle', data: bytesToHexString(r.returnData) })
  return { status: 'success', amountOut, sqrtPriceX96After, initializedTicksCrossed }
}

async function router02AmountsOut(amountIn: bigint, path: Address[]): Promise<bigint[] | undefined> {
  const data = encodeFunctionData({ abi: ROUTER02_ABI, functionName: 'getAmountsOut', args: [amountIn, path] })
  const r = await sim.call(sim.openState(source.latest()), { from: VIEW_CALLER, to: lower(registry.v2.router02), data })
  if (r.status !== 'success') return undefined
  return [...decodeFunctionResult({ abi: ROUTER02_ABI, functionName: 'getAmountsOut', data: bytesToHexString(r.returnData) })]
}

/**
 * Amounts from one base unit up to what it takes to reach the outermost initialized tick on the
 * swap's side (found with the math: a swap limited at that tick's price), so the larger ones cross
 * every tick; `pastLiquidity` adds 1.5x and 4x that, beyond all liquidity (QuoterV2 then walks
 * every bitmap word to the price limit, slow in the EVM, so only where asked).
 */
function amountsFor(pool: V3PoolSnapshot, zeroForOne: boolean, pastLiquidity = false): bigint[] {
  const ticks = [...pool.state.ticks.keys()]
  const edge = zeroForOne ? Math.min(...ticks) : Math.max(...ticks)
  const toEdge = simulateV3Swap(pool.state, { zeroForOne, amountSpecified: 1n << 200n, sqrtPriceLimitX96: getSqrtRatioAtTick(edge) })
  const full = zeroForOne ? toEdge.amount0 : toEdge.amount1
  const fractions: Array<[bigint, bigint]> = [
    [1n, 10n ** 12n],
    [1n, 10n ** 6n],
    [1n, 10n ** 4n],
    [1n, 1000n],
    [1n, 100n],
    [3n, 100n],
    [1n, 10n],
    [1n, 5n],
    [1n, 3n],
    [1n, 2n],
    [2n, 3n],
    [4n, 5n],
    [9n, 10n],
    [99n, 100n],
    ...(pastLiquidity ? ([[3n, 2n], [4n, 1n]] as Array<[bigint, bigint]>) : []),
  ]
  return [1n, 997n, ...fractions.map(([n, d]) => (full * n) / d).filter((a) => a > 0n)]
}

async function loadV3(l: PoolStateLoader, ref: PoolRef): Promise<V3PoolSnapshot> {
  const s = await l.load(source.latest(), ref)
  if (s.protocol !== 'uniswap-v3') throw new Error('not a V3 snapshot')
  return s
}

describe('PoolStateLoader: V3 pools', () => {
  it('loads slot0, liquidity, fee, tickSpacing and every initialized tick of each devnet pool', async () => {
    for (const [i, ref] of v3Refs.entries()) {
      const pool = await loadV3(loader, ref)
      const r = registry.v3.pools[i]
      expect(pool.state.sqrtPriceX96).toBe(BigInt(r.sqrtPriceX96))
      expect(pool.state.tick).toBe(r.tick)
      expect(pool.state.liquidity).toBe(BigInt(r.liquidity))
      expect(pool.state.fee).toBe(r.fee)
      expect(pool.state.tickSpacing).toBe(r.tickSpacing)
      // liquidityNet of each tick: + at a position's lower tick, - at its upper tick
      const expected = new Map<number, bigint>()
      for (const p of r.positions) {
        expected.set(p.tickLower, (expected.get(p.tickLower) ?? 0n) + BigInt(p.liquidity))
        expected.set(p.tickUpper, (expected.get(p.tickUpper) ?? 0n) - BigInt(p.liquidity))
      }
      expect(new Map([...pool.state.ticks].map(([t, info]) => [t, info.liquidityNet]))).toEqual(expected)
      // all of them inside the loaded range (2x price each way covers the devnet positions)
      for (const t of expected.keys()) expect(t >= pool.coverage.tickLower && t <= pool.coverage.tickUpper).toBe(true)
    }
  })

  it('gives exactly what QuoterV2 returns on every devnet pool, both directions, 1 unit to past every tick', async () => {
    let compared = 0
    let refused = 0
    let mostTicksCrossed = 0
    for (const ref of v3Refs) {
      const pool = await loadV3(loader, ref)
      for (const zeroForOne of [true, false]) {
        const [tokenIn, tokenOut] = zeroForOne ? [ref.token0, ref.token1] : [ref.token1, ref.token0]
        for (const amountIn of amountsFor(pool, zeroForOne)) {
          const quoter = await quoterV2(tokenIn, tokenOut, ref.fee, amountIn)
          const ours = quoteV3(pool, zeroForOne, amountIn)
          const where = `${ref.address} zeroForOne=${zeroForOne} amountIn=${amountIn}`
          if (ours === undefined) {
            // refused only when the output is nothing, or the swap would leave the loaded range
            const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
            const r = simulateV3Swap(pool.state, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: limit })
            refused++
            if (r.sqrtPriceX96After !== limit) expect(quoter, where).toMatchObject({ status: 'success', amountOut: 0n })
            continue
          }
          expect(quoter.status, where).toBe('success')
          if (quoter.status !== 'success') continue
          compared++
          expect(ours.amountOut, where).toBe(quoter.amountOut)
          const r = simulateV3Swap(pool.state, { zeroForOne, amountSpecified: amountIn })
          expect(r.sqrtPriceX96After, where).toBe(quoter.sqrtPriceX96After)
          expect(countInitializedTicksCrossed(pool.state.bitmap, pool.state.tickSpacing, pool.state.tick, r.tickAfter), where).toBe(quoter.initializedTicksCrossed)
          mostTicksCrossed = Math.max(mostTicksCrossed, ours.ticksCrossed)
        }
      }
    }
    expect(compared).toBeGreaterThan(v3Refs.length * 2 * 14)
    // only 1-unit inputs that buy nothing
    expect(refused).toBeLessThan(v3Refs.length * 2 * 2)
    // the large ones crossed every tick on their side short of the outermost one
    expect(mostTicksCrossed).toBeGreaterThanOrEqual(3)
  })

  it('with the whole bitmap loaded, matches QuoterV2 past all liquidity too (partial fills)', async () => {
    // one pool per tick spacing of the devnet: 10, 60, 200
    for (const name of ['USDC/WETH 0.05%', 'WETH/DAI 0.3%', 'WETH/LINK 1%']) {
      const ref = v3Refs[registry.v3.pools.findIndex((p) => p.name === name)]
      const partial = await loadV3(loader, ref)
      const full = await loadV3(fullLoader, ref)
      expect(full.coverage.sqrtPriceLimitDown).toBeUndefined()
      expect(full.coverage.sqrtPriceLimitUp).toBeUndefined()
      expect(full.state.ticks).toEqual(partial.state.ticks)
      for (const zeroForOne of [true, false]) {
        const [tokenIn, tokenOut] = zeroForOne ? [ref.token0, ref.token1] : [ref.token1, ref.token0]
        for (const amountIn of amountsFor(full, zeroForOne, true).slice(-3)) {
          const quoter = await quoterV2(tokenIn, tokenOut, ref.fee, amountIn)
          if (quoter.status !== 'success') throw new Error(`QuoterV2 reverted for ${name} ${amountIn}`)
          expect(quoteExactInputSingle(full.state, zeroForOne, amountIn)).toBe(quoter.amountOut)
        }
      }
    }
  })

  it('never trusts the math past the loaded words: such a swap is refused, a wider load quotes it', async () => {
    const ref = v3Refs[registry.v3.pools.findIndex((p) => p.name === 'USDC/WETH 0.05%')]
    // one word each side: spacing 10, 2,560 ticks per word; the outer positions reach ±6,000 ticks
    const narrow = await loadV3(new PoolStateLoader(sim, { tickWindow: 1, maxWordsPerSide: 1 }), ref)
    const wide = await loadV3(loader, ref)
    expect(narrow.coverage.wordUpper - narrow.coverage.wordLower).toBe(2)
    expect(narrow.state.ticks.size).toBeLessThan(wide.state.ticks.size)
    let refused = 0
    for (const zeroForOne of [true, false]) {
      const toEdge = amountsFor(wide, zeroForOne).at(-1) ?? 1n
      // 1/1000 of what reaches the outermost tick to all of it, in steps of ~20%
      const amounts = Array.from({ length: 38 }, (_, i) => (toEdge * BigInt(Math.round(1.2 ** i * 1000))) / 1_000_000n)
      for (const amountIn of amounts) {
        const a = quoteV3(narrow, zeroForOne, amountIn)
        const b = quoteV3(wide, zeroForOne, amountIn)
        if (a !== undefined) expect(a).toEqual(b)
        else if (b !== undefined) refused++
      }
    }
    expect(refused).toBeGreaterThan(0)
  })

  it('computes the coverage bounds and clamps them to the tick range', () => {
    const c = tickCoverage(196256, 10, 3)
    expect(c).toMatchObject({ wordLower: 73, wordUpper: 79, tickLower: 73 * 2560, tickUpper: (79 * 256 + 255) * 10 })
    expect(c.sqrtPriceLimitDown).toBe(getSqrtRatioAtTick(73 * 2560))
    expect(c.sqrtPriceLimitUp).toBe(getSqrtRatioAtTick((79 * 256 + 255) * 10))
    const edge = tickCoverage(-887000, 200, 16)
    expect(edge.tickLower).toBe(MIN_TICK)
    expect(edge.sqrtPriceLimitDown).toBeUndefined()
    expect(edge.sqrtPriceLimitUp).toBeDefined()
    const top = tickCoverage(887000, 1, 16)
    expect(top.tickUpper).toBe(MAX_TICK)
    expect(top.sqrtPriceLimitUp).toBeUndefined()
    // words per side from the window: 2x price is 3 words at spacing 10, 1 at 60 and 200, capped at 16 for spacing 1
    expect([1, 10, 60, 200].map((s) => loader.wordsPerSide(s))).toEqual([16, 3, 1, 1])
  })
})

describe('PoolStateLoader: V2 pairs', () => {
  it('loads the reserves of every pair, and quotes exactly Router02.getAmountsOut in both directions', async () => {
    for (const [i, ref] of v2Refs.entries()) {
      const pool = (await loader.load(source.latest(), ref)) as V2PoolSnapshot
      expect(pool.protocol).toBe('uniswap-v2')
      expect([pool.reserve0, pool.reserve1]).toEqual([BigInt(registry.v2.pairs[i].reserve0), BigInt(registry.v2.pairs[i].reserve1)])
      for (const zeroForOne of [true, false]) {
        const reserveIn = zeroForOne ? pool.reserve0 : pool.reserve1
        const path = zeroForOne ? [ref.token0, ref.token1] : [ref.token1, ref.token0]
        for (const amountIn of [1000n, reserveIn / 10_000n, reserveIn / 100n, reserveIn / 3n, reserveIn * 5n]) {
          const expected = await router02AmountsOut(amountIn, path)
          const ours = quoteV2(pool, zeroForOne, amountIn)
          if (expected === undefined || expected[1] === 0n) expect(ours).toBeUndefined()
          else expect(ours?.amountOut).toBe(expected[1])
        }
      }
    }
  })

  it('quotes two-hop V2 paths exactly as Router02.getAmountsOut', async () => {
    const pair = async (a: Address, b: Address) => {
      const ref = v2Refs.find((p) => (p.token0 === a && p.token1 === b) || (p.token0 === b && p.token1 === a))
      if (!ref) throw new Error('no pair')
      return loader.load(source.latest(), ref)
    }
    for (const [a, mid, b] of [
      ['DAI', 'WETH', 'USDC'],
      ['UNI', 'WETH', 'LINK'],
      ['WBTC', 'USDC', 'DAI'],
    ]) {
      const p1 = await pair(tok(a), tok(mid))
      const p2 = await pair(tok(mid), tok(b))
      const hops: PathHop[] = [
        { pool: p1, tokenIn: tok(a), tokenOut: tok(mid), zeroForOne: tok(a) === p1.token0 },
        { pool: p2, tokenIn: tok(mid), tokenOut: tok(b), zeroForOne: tok(mid) === p2.token0 },
      ]
      for (const amountIn of [10n ** 6n, 10n ** 9n, E18, 100n * E18]) {
        const expected = await router02AmountsOut(amountIn, [tok(a), tok(mid), tok(b)])
        // a zero output anywhere on the path: the pair would revert, the path is refused
        if (expected === undefined || expected.includes(0n)) expect(quotePath(hops, amountIn)).toBeUndefined()
        else expect(quotePath(hops, amountIn)?.amountOut).toBe(expected[2])
      }
    }
  })
})

describe('PoolStateLoader: caching and failures', () => {
  it('caches snapshots per (block, pool) and shares concurrent loads', async () => {
    const l = new PoolStateLoader(sim)
    const [a, b] = await Promise.all([l.load(source.latest(), v3Refs[0]), l.load(source.latest(), v3Refs[0])])
    expect(a).toBe(b)
    expect(await l.load(source.latest(), v3Refs[0])).toBe(a)
  })

  it('reports pools that are not pools instead of failing the whole load', async () => {
    const l = new PoolStateLoader(sim)
    const notAPool: PoolRef = { ...v3Refs[0], address: lower(registry.v2.router02) }
    const wrongFee: PoolRef = { ...v3Refs[0], fee: 10000 }
    const result = await l.loadAll(source.latest(), [v2Refs[0], notAPool, wrongFee, v3Refs[1]])
    expect(result.pools.map((p: PoolSnapshot) => p.address)).toEqual([v2Refs[0].address, v3Refs[1].address])
    expect(result.failed.map((f) => f.pool.address)).toEqual([notAPool.address, wrongFee.address])
    expect(result.failed.map((f) => f.error.reason)).toEqual(['reverted', 'inconsistent'])
  })
})

describe('PoolStateLoader: a new devnet head', () => {
  it("takes the parent's snapshot of every pool its block did not touch, and reads the swapped pair again", async () => {
    // a source of its own: committing a block on the shared one would move every other test's state
    const own = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
    const genesis = own.latest()
    const l = new PoolStateLoader(sim)
    const swapped = v2Refs.find((r) => r.address === V2_USDC_WETH)!
    const untouchedV3 = v3Refs[0]
    const [pairBefore, v3Before] = await Promise.all([l.load(genesis, swapped), l.load(genesis, untouchedV3)])

    const tx = decodeSignedTransaction(loadFixtureTxs().find((f) => f.name === 'v2-swapExactETHForTokens-small')!.raw, { chainId: own.chainId, common: sim.common })
    const result = await sim.transaction(sim.openState(genesis), tx.tx)
    const head = own.commitBlock(result.state, { ...result.state.block, gasUsed: result.gasUsed, transactionHashes: [tx.hash] })
    expect(head.stateDiff().accounts).toContain(V2_USDC_WETH)
    expect(head.stateDiff().accounts).not.toContain(untouchedV3.address)

    const [pairAfter, v3After] = await Promise.all([l.load(head, swapped), l.load(head, untouchedV3)])
    expect(v3After).toBe(v3Before)
    expect(pairAfter).not.toBe(pairBefore)
    // what a loader that never saw the parent reads at the head
    const fresh = new PoolStateLoader(sim)
    expect(pairAfter).toEqual(await fresh.load(head, swapped))
    expect(v3After).toEqual(await fresh.load(head, untouchedV3))
    expect((pairAfter as V2PoolSnapshot).reserve0).not.toBe((pairBefore as V2PoolSnapshot).reserve0)

    // discovery reads only the venues' factories (and the PoolManager), which a swap does not write
    const discovery = new PoolDiscovery(sim, DEX)
    const [a, b] = [lower(swapped.token0), lower(swapped.token1)]
    const found = discovery.pairPools(new ViewCaller(sim, genesis), a, b)
    expect(discovery.pairPools(new ViewCaller(sim, head), a, b)).toBe(found)
    expect(await found).toEqual(await new PoolDiscovery(sim, DEX).pairPools(new ViewCaller(sim, head), a, b))
  })

  it('reads every pool again at a head whose source names no diff (a fork head, a reorg)', async () => {
    const l = new PoolStateLoader(sim)
    const genesis = source.latest()
    const before = await l.load(genesis, v3Refs[0])
    const child: StateReader = Object.assign(Object.create(genesis) as StateReader, {
      block: { ...genesis.block, number: genesis.block.number + 1n, hash: `0x${'ab'.repeat(32)}` as const },
      stateDiff: () => undefined,
    })
    const after = await l.load(child, v3Refs[0])
    expect(after).not.toBe(before)
    expect(after).toEqual(before)
  })
})
