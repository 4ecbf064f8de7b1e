/**
 * Uniswap V4 on the devnet: the singleton PoolManager and two of @uniswap/v4-core's test routers,
 * each at a fixed address (a labelled deployer's nonce 0, like fixed-deployments.ts), then the pools
 * of layout.ts V4_POOLS initialised on the PoolManager and given the POSITION_TEMPLATE's liquidity
 * through PoolModifyLiquidityTest (which settles through unlock/unlockCallback: sync, transferFrom,
 * settle; native ETH by settle{value}). Runs after the second venues and before the extension
 * point, so nothing that existed before moves; every dev account approves PoolSwapTest for every
 * token (plain calls: nonces stay 0) so fixtures can swap through it.
 *
 * The hooked pools come last (v4-hooks.ts: the hooks at mined CREATE2 addresses, then their
 * dynamic-fee pools), so the state of the pools before them does not move.
 *
 * The pools' state in the registry is read back through PoolManager.extsload at StateLibrary's
 * slots (src/pools/uniswap-v4-slots.ts), the same view the service reads.
 */
import { encodeAbiParameters, getAddress, maxUint256, zeroAddress, type Hex } from 'viem'
import { getSqrtRatioAtTick, V4_DYNAMIC_FEE_FLAG } from '../../src/dex/math/index.ts'
import { v4LiquiditySlot, v4PoolId, v4Slot0Slot, decodeV4Slot0 } from '../../src/pools/uniswap-v4-slots.ts'
import { sorted, type TokenInfo } from './add-liquidity.ts'
import { ERC20_ABI, projectArtifact, type UniswapV4Artifacts } from './artifacts.ts'
import type { BuildChain } from './build-chain.ts'
import { DEPLOYER, labelledAccount } from './config.ts'
import type { Spender } from './fund-accounts.ts'
import { POSITION_TEMPLATE, USD_PRICE, V4_POOLS, V4_VENUE, type TokenSymbol, type V4PoolSpec } from './layout.ts'
import { ceilTick, floorTick, liquidityForAmounts, rawPrice, sqrtPriceX96, unitsForUsd, type Ratio } from './price-math.ts'
import type { RegistryV4, RegistryV4Pool, RegistryV4Position, RegistryV4Venue } from './registry.ts'
import { deployV4Hooks, DIRECTIONAL_FEES, type V4Hooks } from './v4-hooks.ts'

/** labels of the fixed V4 deployers (never rename: the addresses derive from them) */
const LABELS = {
  poolManager: 'fixed:uniswap-v4-pool-manager',
  poolModifyLiquidityTest: 'fixed:uniswap-v4-modify-liquidity-test',
  poolSwapTest: 'fixed:uniswap-v4-swap-test',
} as const

/** native ether as a V4 currency, priced like WETH */
const NATIVE: TokenInfo & { symbol: never } = { symbol: 'ETH' as never, address: zeroAddress, decimals: 18, usd: USD_PRICE.WETH }

export interface V4Deployment {
  registry: RegistryV4
  /** the VENUES entry: the PoolManager and every pool's key (native ETH and hooked pools included) */
  venue: RegistryV4Venue
  /** PoolSwapTest, approved by every dev account for every token */
  spender: Spender
}

export async function deployUniswapV4(
  chain: BuildChain,
  v4: UniswapV4Artifacts,
  tokens: Map<TokenSymbol, TokenInfo>,
  devAccounts: readonly { address: Hex }[],
): Promise<V4Deployment> {
  // the protocol-fee owner is the deployer; the protocol fee stays 0 (no controller is set)
  const poolManager = await deployFixed(chain, LABELS.poolManager, v4.poolManager, [DEPLOYER.address])
  const poolModifyLiquidityTest = await deployFixed(chain, LABELS.poolModifyLiquidityTest, v4.poolModifyLiquidityTest, [poolManager])
  const poolSwapTest = await deployFixed(chain, LABELS.poolSwapTest, v4.poolSwapTest, [poolManager])

  for (const token of tokens.values()) {
    await chain.send(DEPLOYER, token.address, { abi: ERC20_ABI, functionName: 'approve', args: [poolModifyLiquidityTest, maxUint256] })
  }
  const pools: RegistryV4Pool[] = []
  let hooks: V4Hooks | undefined
  for (const spec of V4_POOLS) {
    // the hooks are deployed before the first hooked pool: the pools before it do not move
    if (spec.hook !== undefined) hooks ??= await deployV4Hooks(chain, poolManager)
    pools.push(await addPool(chain, v4, { poolManager, poolModifyLiquidityTest, hooks }, tokens, spec))
  }
  if (hooks === undefined) throw new Error('V4_POOLS has no hooked pool: the devnet has no hook contracts')

  for (const account of devAccounts) {
    for (const token of tokens.values()) {
      await chain.callAs(account.address, token.address, { abi: ERC20_ABI, functionName: 'approve', args: [poolSwapTest, maxUint256] })
    }
  }
  const poolKeys = pools.map((p) => ({ currency0: p.currency0, currency1: p.currency1, fee: p.fee, tickSpacing: p.tickSpacing, hooks: p.hooks }))
  return {
    registry: {
      name: V4_VENUE.name,
      poolManager,
      poolModifyLiquidityTest,
      poolSwapTest,
      protocolFeeOwner: DEPLOYER.address,
      hookCreate2Deployer: hooks.create2Deployer,
      hooks: [hooks.swapCounter, hooks.directionalFee],
      pools,
    },
    venue: { kind: 'v4', name: V4_VENUE.name, poolManager, poolKeys },
    spender: { name: 'PoolSwapTest', address: poolSwapTest },
  }
}

async function deployFixed(chain: BuildChain, label: string, artifact: UniswapV4Artifacts['poolManager'], args: readonly unknown[]): Promise<Hex> {
  const deployer = labelledAccount(label)
  const address = await chain.deploy(deployer, artifact, args)
  return getAddress(address)
}

/** the spec's currencies in pool order and the pool's initial price of currency0 in currency1 */
function currencies(spec: V4PoolSpec, tokens: Map<TokenSymbol, TokenInfo>): { c0: TokenInfo; c1: TokenInfo; price: Ratio } {
  if (spec.a !== 'ETH') {
    const [c0, c1] = sorted({ a: spec.a, b: spec.b }, tokens)
    return { c0, c1, price: rawPrice(c0, c1, spec.deviationBps) }
  }
  // native ETH is always currency0; the deviation applies in the order the WETH pair sorts, so
  // the native pool sits at its WETH twin's price
  const [w0, w1] = sorted({ a: 'WETH', b: spec.b }, tokens)
  const twin = rawPrice(w0, w1, spec.deviationBps)
  const other = tokens.get(spec.b)!
  return { c0: NATIVE, c1: other, price: w0.symbol === 'WETH' ? twin : { num: twin.den, den: twin.num } }
}

async function addPool(
  chain: BuildChain,
  v4: UniswapV4Artifacts,
  at: { poolManager: Hex; poolModifyLiquidityTest: Hex; hooks: V4Hooks | undefined },
  tokens: Map<TokenSymbol, TokenInfo>,
  spec: V4PoolSpec,
): Promise<RegistryV4Pool> {
  const { c0, c1, price } = currencies(spec, tokens)
  const hook = spec.hook === undefined ? undefined : spec.hook === 'swap-counter' ? at.hooks!.swapCounter : at.hooks!.directionalFee
  // a hooked pool has a dynamic fee: the LP fee in slot0 is the hook's (or its owner's) to set
  const key = { currency0: c0.address, currency1: c1.address, fee: hook === undefined ? spec.fee : V4_DYNAMIC_FEE_FLAG, tickSpacing: spec.tickSpacing, hooks: hook?.address ?? zeroAddress }
  const sqrtPrice = sqrtPriceX96(price)
  const tick = await chain.sendAndDecode<number>(DEPLOYER, at.poolManager, { abi: v4.poolManager.abi, functionName: 'initialize', args: [key, sqrtPrice] })
  if (spec.hook === 'swap-counter') {
    await chain.send(DEPLOYER, at.hooks!.swapCounter.address, { abi: projectArtifact('DevnetSwapCounterHook').abi, functionName: 'setLpFee', args: [key, spec.fee] })
  }
  if (spec.hook === 'directional-fee' && spec.fee !== DIRECTIONAL_FEES.zeroForOne) throw new Error(`the directional-fee hook sets ${DIRECTIONAL_FEES.zeroForOne}, not ${spec.fee}`)

  const positions: RegistryV4Position[] = []
  for (const p of POSITION_TEMPLATE) {
    const tickLower = p.lower > 0 ? ceilTick(tick + p.lower, spec.tickSpacing) : floorTick(tick + p.lower, spec.tickSpacing)
    const tickUpper = p.upper < 0 ? floorTick(tick + p.upper, spec.tickSpacing) : ceilTick(tick + p.upper, spec.tickSpacing)
    const usd = (spec.usd * p.sharePct) / 100n
    const above = tickLower > tick
    const below = tickUpper <= tick
    const amount0 = below ? 0n : unitsForUsd(above ? usd : usd / 2n, c0)
    const amount1 = above ? 0n : unitsForUsd(below ? usd : usd / 2n, c1)
    const liquidity = liquidityForAmounts(sqrtPrice, getSqrtRatioAtTick(tickLower), getSqrtRatioAtTick(tickUpper), amount0, amount1)
    // native ETH goes in as value; the router returns what the position did not take
    const value = c0.address === zeroAddress ? amount0 + 1n : 0n
    const salt = encodeAbiParameters([{ type: 'uint256' }], [0n])
    await chain.send(DEPLOYER, at.poolModifyLiquidityTest, {
      abi: v4.poolModifyLiquidityTest.abi,
      functionName: 'modifyLiquidity',
      args: [key, { tickLower, tickUpper, liquidityDelta: liquidity, salt }, '0x'],
      value,
    })
    positions.push({ tickLower, tickUpper, liquidity: liquidity.toString() })
  }

  const id = v4PoolId(key)
  const [slot0Word, liquidityWord] = [await extsload(chain, v4, at.poolManager, v4Slot0Slot(id)), await extsload(chain, v4, at.poolManager, v4LiquiditySlot(id))]
  const slot0 = decodeV4Slot0(slot0Word)
  if (slot0.lpFee !== spec.fee) throw new Error(`V4 pool ${id}: slot0's LP fee is ${slot0.lpFee}, the layout says ${spec.fee}`)
  const symbol = (c: TokenInfo) => (c.address === zeroAddress ? 'ETH' : c.symbol)
  return {
    name: `${symbol(c0)}/${symbol(c1)} ${hook === undefined ? '' : 'dynamic '}${spec.fee / 10_000}% ts${spec.tickSpacing}${hook === undefined ? '' : ` ${spec.hook}`}`,
    poolId: id,
    currency0: c0.address,
    currency1: c1.address,
    fee: key.fee,
    lpFee: slot0.lpFee,
    tickSpacing: spec.tickSpacing,
    hooks: key.hooks,
    sqrtPriceX96: slot0.sqrtPriceX96.toString(),
    tick: slot0.tick,
    liquidity: (liquidityWord & ((1n << 128n) - 1n)).toString(),
    positions,
  }
}

async function extsload(chain: BuildChain, v4: UniswapV4Artifacts, poolManager: Hex, slot: Hex): Promise<bigint> {
  const word = await chain.read<Hex>(poolManager, { abi: v4.poolManager.abi, functionName: 'extsload', args: [slot] })
  return BigInt(word)
}
