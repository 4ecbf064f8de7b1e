/**
 * SwapPlanRouter (src/contracts/SwapPlanRouter.sol) on a real anvil loaded with the devnet genesis,
 * where it sits at registry.extensions['swap-plan-router'] and every dev account has max-approved
 * it for every token (the extension's setup in scripts/devnet/fixed-deployments.ts).
 *
 * Each test runs on a snapshot of the genesis state and reverts it afterwards. Expected outputs
 * come from the Uniswap periphery on the same state (Router02.getAmountsOut, QuoterV2), hop by
 * hop; the pools of one plan are disjoint, so per-hop quotes compose exactly.
 */
import {
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  decodeEventLog,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  encodePacked,
  getCreate2Address,
  http,
  keccak256,
  parseAbi,
  parseEther,
  parseUnits,
  zeroAddress,
  type Abi,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { ERC20_ABI, npmArtifact, projectArtifact } from '../../scripts/devnet/artifacts.ts'
import type { TokenSymbol, V3Fee } from '../../scripts/devnet/layout.ts'
import { GENESIS_PATH, REGISTRY_PATH } from '../../scripts/devnet/paths.ts'
import { getAmountOut } from '../../src/dex/math/index.ts'
import { readRegistry, tokenBySymbol, v2v3Venues, type DevnetRegistry } from '../../scripts/devnet/registry.ts'
import { venueArgs } from '../../scripts/devnet/fixed-deployments.ts'
import { SWAP_PLAN_ROUTER_ABI, encodeSwapPlanCall, type PostSwapCall } from '../../src/quote/router-calldata.ts'
import type { PlanHop, PlanLeg, SwapPlan } from '../../src/routing/swap-plan.ts'

const registry = readRegistry(REGISTRY_PATH)
const V2_PAIR_RESERVES = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)'])
const ROUTER = registry.extensions['swap-plan-router']!
const V2_ROUTER = npmArtifact('@uniswap/v2-periphery/build/UniswapV2Router02.json').abi
const SWAP_ROUTER = npmArtifact('@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json').abi
const QUOTER_V2 = npmArtifact('@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json').abi
const V2_PAIR = npmArtifact('@uniswap/v2-core/build/UniswapV2Pair.json').abi
const PROXY_ABI = projectArtifact('SwapPlanRouterCallProxy').abi
/** Error(string), for reverts of the Uniswap contracts and the tokens. */
const ERROR_STRING = [{ type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] }] as const satisfies Abi
const REVERT_ABI: Abi = [...SWAP_PLAN_ROUTER_ABI, ...PROXY_ABI, ...ERROR_STRING]

const FAR_DEADLINE = 1n << 64n
const GAS_LIMIT = 2_000_000n
const account = (i: number) => registry.devAccounts.accounts[i]!
const token = (s: TokenSymbol) => tokenBySymbol(registry, s).address

// ---- plans ----

function v2(a: TokenSymbol, b: TokenSymbol): PlanHop {
  const [tokenIn, tokenOut] = [token(a), token(b)]
  const pair = registry.v2.pairs.find((p) => new Set([p.token0, p.token1]).has(tokenIn) && new Set([p.token0, p.token1]).has(tokenOut))
  if (!pair) throw new Error(`no V2 pair ${a}/${b}`)
  return { protocol: 'uniswap-v2', pool: pair.address, tokenIn, tokenOut, fee: 3000, zeroForOne: BigInt(tokenIn) < BigInt(tokenOut) }
}

function v3(a: TokenSymbol, b: TokenSymbol, fee: V3Fee): PlanHop {
  const [tokenIn, tokenOut] = [token(a), token(b)]
  const pool = registry.v3.pools.find((p) => p.fee === fee && new Set([p.token0, p.token1]).has(tokenIn) && new Set([p.token0, p.token1]).has(tokenOut))
  if (!pool) throw new Error(`no V3 pool ${a}/${b} ${fee}`)
  return { protocol: 'uniswap-v3', pool: pool.address, tokenIn, tokenOut, fee, zeroForOne: BigInt(tokenIn) < BigInt(tokenOut) }
}

const leg = (amountIn: bigint, ...hops: PlanHop[]): PlanLeg => ({ amountIn, hops, expectedAmountOut: 0n })

function plan(...legs: PlanLeg[]): SwapPlan {
  const first = legs[0]!.hops
  return {
    tokenIn: first[0]!.tokenIn,
    tokenOut: first[first.length - 1]!.tokenOut,
    amountIn: legs.reduce((s, l) => s + l.amountIn, 0n),
    legs,
    expectedAmountOut: 0n,
  }
}

interface OnchainHop {
  protocol: number
  pool: Hex
  tokenOut: Hex
  fee: number
  /** V4 hops only; 0 (the default) for V2 and V3 */
  tickSpacing?: number
  /** V4 hops only; address(0) (the default) for none */
  hooks?: Hex
}

/** Calldata without the TS encoder's checks: what a hostile caller can send. */
function rawSwapCall(p: { tokenIn: Hex; tokenOut: Hex; amountIn: bigint; legs: { amountIn: bigint; hops: OnchainHop[] }[] }, minAmountOut = 0n, recipient: Hex = zeroAddress, deadline = FAR_DEADLINE, postCall?: PostSwapCall): Hex {
  return encodeFunctionData({
    abi: SWAP_PLAN_ROUTER_ABI,
    functionName: 'swap',
    args: [
      { ...p, legs: p.legs.map((l) => ({ ...l, hops: l.hops.map((h) => ({ ...h, tickSpacing: h.tickSpacing ?? 0, hooks: h.hooks ?? zeroAddress })) })) },
      minAmountOut,
      recipient,
      deadline,
      postCall?.target ?? zeroAddress,
      postCall?.data ?? '0x',
    ],
  })
}

const onchainHop = (h: PlanHop): OnchainHop => ({ protocol: h.protocol === 'uniswap-v2' ? 0 : 1, pool: h.pool, tokenOut: h.tokenOut, fee: h.fee })

describe('SwapPlanRouter on the devnet', () => {
  let anvil: AnvilInstance
  let client: PublicClient
  let snapshot: Hex
  const gas: Record<string, bigint> = {}

  const read = <T>(address: Hex, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
    client.readContract({ address, abi, functionName, args }) as Promise<T>
  const balanceOf = (t: Hex, owner: Hex) => read<bigint>(t, ERC20_ABI, 'balanceOf', [owner])

  async function v2Quote(amountIn: bigint, ...path: TokenSymbol[]): Promise<bigint> {
    const amounts = await read<bigint[]>(registry.v2.router02, V2_ROUTER, 'getAmountsOut', [amountIn, path.map(token)])
    return amounts[amounts.length - 1]!
  }

  async function v3Quote(amountIn: bigint, a: TokenSymbol, b: TokenSymbol, fee: V3Fee): Promise<bigint> {
    const { result } = await client.simulateContract({
      address: registry.v3.quoterV2,
      abi: QUOTER_V2,
      functionName: 'quoteExactInputSingle',
      args: [{ tokenIn: token(a), tokenOut: token(b), amountIn, fee, sqrtPriceLimitX96: 0n }],
    })
    return (result as readonly bigint[])[0]!
  }

  async function send(from: number, to: Hex, data: Hex, value = 0n): Promise<TransactionReceipt> {
    const wallet = createWalletClient({ account: privateKeyToAccount(account(from).privateKey), chain: foundry, transport: http(anvil.url) })
    const hash = await wallet.sendTransaction({ to, data, value, gas: GAS_LIMIT })
    return client.waitForTransactionReceipt({ hash })
  }

  /** eth_call from `from`; the router's return value. */
  async function callSwap(from: number, data: Hex, value = 0n): Promise<bigint> {
    const { data: out } = await client.call({ account: account(from).address, to: ROUTER, data, value, gas: GAS_LIMIT })
    return decodeFunctionResult({ abi: SWAP_PLAN_ROUTER_ABI, functionName: 'swap', data: out! }) as bigint
  }

  /** The decoded revert of an eth_call to `to` (the router unless said). */
  async function revertOf(from: Hex, data: Hex, opts: { value?: bigint; to?: Hex } = {}): Promise<{ errorName: string; args: readonly unknown[] }> {
    const res = await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_call',
        params: [{ from, to: opts.to ?? ROUTER, data, value: `0x${(opts.value ?? 0n).toString(16)}`, gas: `0x${GAS_LIMIT.toString(16)}` }, 'latest'],
      }),
    })
    const body = (await res.json()) as { result?: Hex; error?: { message: string; data?: Hex } }
    if (!body.error) throw new Error(`expected a revert, got ${body.result}`)
    if (!body.error.data || body.error.data === '0x') throw new Error(`revert without data: ${body.error.message}`)
    const decoded = decodeErrorResult({ abi: REVERT_ABI, data: body.error.data })
    return { errorName: decoded.errorName, args: decoded.args ?? [] }
  }

  /** Runs `swap` from dev account `from`; checks the eth_call result, the event and the router's empty hands. */
  async function swap(from: number, p: SwapPlan, opts: { recipient?: Hex; minAmountOut?: bigint; value?: bigint; postCall?: PostSwapCall } = {}) {
    const data = encodeSwapPlanCall({ plan: p, minAmountOut: opts.minAmountOut ?? 0n, recipient: opts.recipient, deadline: FAR_DEADLINE, postCall: opts.postCall })
    const recipient = opts.recipient ?? account(from).address
    const before = { out: await balanceOf(p.tokenOut, recipient), in: await balanceOf(p.tokenIn, account(from).address) }
    const returned = await callSwap(from, data, opts.value)
    const receipt = await send(from, ROUTER, data, opts.value)
    expect(receipt.status).toBe('success')
    const after = { out: await balanceOf(p.tokenOut, recipient), in: await balanceOf(p.tokenIn, account(from).address) }
    const swapped = receipt.logs
      .filter((l) => l.address.toLowerCase() === ROUTER.toLowerCase())
      .map((l) => decodeEventLog({ abi: SWAP_PLAN_ROUTER_ABI, data: l.data, topics: l.topics }))
    expect(swapped).toHaveLength(1)
    expect(swapped[0]!.eventName).toBe('Swapped')
    expect(swapped[0]!.args).toEqual({
      sender: account(from).address,
      recipient,
      tokenIn: p.tokenIn,
      tokenOut: p.tokenOut,
      amountIn: p.amountIn,
      amountOut: returned,
    })
    // the router keeps nothing: no token of the plan, no ETH
    const tokens = new Set(p.legs.flatMap((l) => l.hops.flatMap((h) => [h.tokenIn, h.tokenOut])))
    for (const t of tokens) expect(await balanceOf(t, ROUTER), `router balance of ${t}`).toBe(0n)
    expect(await client.getBalance({ address: ROUTER })).toBe(0n)
    return { amountOut: after.out - before.out, paid: before.in - after.in, returned, receipt }
  }

  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    client = createPublicClient({ chain: foundry, transport: http(anvil.url) })
  })
  afterAll(async () => {
    if (Object.keys(gas).length > 0) console.log(`SwapPlanRouter gasUsed: ${JSON.stringify(Object.fromEntries(Object.entries(gas).map(([k, v]) => [k, Number(v)])))}`)
    await anvil?.stop()
  })
  beforeEach(async () => {
    snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
  })
  afterEach(async () => {
    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
  })

  it('is deployed with the registry contracts as its constructor arguments', async () => {
    expect(await read<Hex>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'weth')).toBe(registry.weth)
    // every venue of the registry, Uniswap's first: V2 with its fee, V3 by its pool deployer
    const [v2Venues, v3Venues] = venueArgs(registry as unknown as DevnetRegistry)
    expect(await read<unknown>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'v2Venues')).toEqual(v2Venues.map((v) => ({ ...v, factory: getAddress(v.factory) })))
    expect(await read<unknown>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'v3Venues')).toEqual(v3Venues.map((v) => ({ ...v, poolDeployer: getAddress(v.poolDeployer) })))
    expect(v2Venues.map((v) => v.feeBps)).toEqual([30, 25])
    expect(v2Venues[0]!.initCodeHash).toBe(registry.v2.pairInitCodeHash)
    expect(v3Venues.map((v) => v.initCodeHash)).toEqual([registry.v3.poolInitCodeHash, registry.v3.poolInitCodeHash])
    const proxy = await read<Hex>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'postCallProxy')
    expect(await read<Hex>(proxy, PROXY_ABI, 'router')).toBe(ROUTER)
    expect(registry.devAccounts.approvedSpenders).toContainEqual({ name: 'SwapPlanRouter', address: ROUTER })
  })

  it('single V2 hop: pays the recipient exactly what Router02.getAmountsOut says, for at most 6,100 gas more than Router02 (5,500 before hops carried V4\'s tick-spacing word, 5,800 before its hooks word)', async () => {
    const amountIn = parseEther('1')
    const expected = await v2Quote(amountIn, 'WETH', 'USDC')
    const recipient = account(7).address
    const result = await swap(0, plan(leg(amountIn, v2('WETH', 'USDC'))), { recipient, minAmountOut: expected })
    expect(result.returned).toBe(expected)
    expect(result.amountOut).toBe(expected)
    expect(result.paid).toBe(amountIn)
    gas['v2 1 hop'] = result.receipt.gasUsed

    // Router02 on the same state, same swap
    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    const data = encodeFunctionData({
      abi: V2_ROUTER,
      functionName: 'swapExactTokensForTokens',
      args: [amountIn, expected, [registry.weth, token('USDC')], recipient, FAR_DEADLINE],
    })
    const router02 = await send(0, registry.v2.router02, data)
    gas['Router02 v2 1 hop (reference)'] = router02.gasUsed
    // the difference is the Swapped event (~2,500), the struct calldata (~2,200 more than a path)
    // and the venue check (the pair proven against the trusted venues' slots, the fee read from its
    // venue: ~300); transfers, pair calls and checks cost what Router02's do
    expect(result.receipt.gasUsed).toBeLessThan(router02.gasUsed + 6_100n)
  })

  it('single V3 hop: pays exactly what QuoterV2 says, for at most 6,600 gas more than SwapRouter (6,000 before hops carried V4\'s tick-spacing word, 6,300 before its hooks word)', async () => {
    const amountIn = parseUnits('3000', 6)
    const expected = await v3Quote(amountIn, 'USDC', 'WETH', 500)
    const result = await swap(1, plan(leg(amountIn, v3('USDC', 'WETH', 500))), { minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    expect(result.returned).toBe(expected)
    expect(result.paid).toBe(amountIn)
    gas['v3 1 hop'] = result.receipt.gasUsed

    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    const data = encodeFunctionData({
      abi: SWAP_ROUTER,
      functionName: 'exactInputSingle',
      args: [{ tokenIn: token('USDC'), tokenOut: registry.weth, fee: 500, recipient: account(1).address, deadline: FAR_DEADLINE, amountIn, amountOutMinimum: expected, sqrtPriceLimitX96: 0n }],
    })
    const swapRouter = await send(1, registry.v3.swapRouter, data)
    gas['SwapRouter v3 1 hop (reference)'] = swapRouter.gasUsed
    // event and calldata as for V2, plus the transient lock and armed-pool slots
    expect(result.receipt.gasUsed).toBeLessThan(swapRouter.gasUsed + 6_600n)
  })

  it('three hops V3 -> V2 -> V3 (DAI -> USDC -> USDT -> WETH): output is the hop-by-hop quote', async () => {
    const amountIn = parseUnits('5000', 18)
    const usdc = await v3Quote(amountIn, 'DAI', 'USDC', 500)
    const usdt = await v2Quote(usdc, 'USDC', 'USDT')
    const expected = await v3Quote(usdt, 'USDT', 'WETH', 500)
    const result = await swap(2, plan(leg(amountIn, v3('DAI', 'USDC', 500), v2('USDC', 'USDT'), v3('USDT', 'WETH', 500))), { minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    expect(result.paid).toBe(amountIn)
    gas['3 hops v3-v2-v3'] = result.receipt.gasUsed
  })

  it('three hops V2 -> V2 -> V3 (WBTC -> WETH -> DAI -> USDC): V2 output goes straight into the next pair', async () => {
    const amountIn = parseUnits('0.1', 8)
    const dai = await v2Quote(amountIn, 'WBTC', 'WETH', 'DAI')
    const expected = await v3Quote(dai, 'DAI', 'USDC', 500)
    const result = await swap(3, plan(leg(amountIn, v2('WBTC', 'WETH'), v2('WETH', 'DAI'), v3('DAI', 'USDC', 500))), { minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    gas['3 hops v2-v2-v3'] = result.receipt.gasUsed
  })

  it('two V3 hops (USDC -> WETH -> LINK): the router pays the second pool from the first one\'s output', async () => {
    const amountIn = parseUnits('1500', 6)
    const weth = await v3Quote(amountIn, 'USDC', 'WETH', 3000)
    const expected = await v3Quote(weth, 'WETH', 'LINK', 10000)
    const result = await swap(4, plan(leg(amountIn, v3('USDC', 'WETH', 3000), v3('WETH', 'LINK', 10000))), { minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    gas['2 hops v3-v3'] = result.receipt.gasUsed
  })

  it('split over two legs (V3 direct, and V2 -> V2 through DAI): output is the sum of the legs\' quotes', async () => {
    const a = parseEther('6')
    const b = parseEther('4')
    const expected = (await v3Quote(a, 'WETH', 'USDC', 500)) + (await v2Quote(b, 'WETH', 'DAI', 'USDC'))
    const recipient = account(8).address
    const result = await swap(5, plan(leg(a, v3('WETH', 'USDC', 500)), leg(b, v2('WETH', 'DAI'), v2('DAI', 'USDC'))), { recipient, minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    expect(result.paid).toBe(a + b)
    gas['split 2 legs (v3 | v2-v2)'] = result.receipt.gasUsed
  })

  it('takes ETH instead of WETH when msg.value equals amountIn, and rejects any other value', async () => {
    const half = parseEther('1')
    const split = plan(leg(half, v3('WETH', 'USDT', 500)), leg(half, v2('WETH', 'USDT')))
    const expected = (await v3Quote(half, 'WETH', 'USDT', 500)) + (await v2Quote(half, 'WETH', 'USDT'))
    const ethBefore = await client.getBalance({ address: account(6).address })
    const result = await swap(6, split, { value: 2n * half, minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    expect(result.paid).toBe(0n) // no WETH taken from the account
    const ethAfter = await client.getBalance({ address: account(6).address })
    expect(ethBefore - ethAfter).toBe(2n * half + result.receipt.gasUsed * result.receipt.effectiveGasPrice)
    gas['split 2 legs from ETH (v3 | v2)'] = result.receipt.gasUsed

    const from = account(6).address
    const data = encodeSwapPlanCall({ plan: split, minAmountOut: 0n, deadline: FAR_DEADLINE })
    expect(await revertOf(from, data, { value: 2n * half - 1n })).toEqual({ errorName: 'InvalidEthValue', args: [] })
    const usdcPlan = plan(leg(parseUnits('100', 6), v2('USDC', 'WETH')))
    expect(await revertOf(from, encodeSwapPlanCall({ plan: usdcPlan, minAmountOut: 0n, deadline: FAR_DEADLINE }), { value: 1n })).toEqual({ errorName: 'InvalidEthValue', args: [] })
  })

  it('enforces minAmountOut with InsufficientOutput(amountOut, minAmountOut)', async () => {
    const amountIn = parseEther('1')
    const expected = await v2Quote(amountIn, 'WETH', 'DAI')
    const data = encodeSwapPlanCall({ plan: plan(leg(amountIn, v2('WETH', 'DAI'))), minAmountOut: expected + 1n, deadline: FAR_DEADLINE })
    expect(await revertOf(account(0).address, data)).toEqual({ errorName: 'InsufficientOutput', args: [expected, expected + 1n] })
    // mined, it reverts and moves nothing
    const before = await balanceOf(registry.weth, account(0).address)
    expect((await send(0, ROUTER, data)).status).toBe('reverted')
    expect(await balanceOf(registry.weth, account(0).address)).toBe(before)
  })

  it('enforces the deadline with Expired()', async () => {
    // eth_call runs in the latest block's context, a new transaction in a later block: one second
    // before the latest block is past for both
    const latest = await client.getBlock()
    const data = encodeSwapPlanCall({ plan: plan(leg(parseEther('1'), v2('WETH', 'DAI'))), minAmountOut: 0n, deadline: latest.timestamp - 1n })
    expect(await revertOf(account(0).address, data)).toEqual({ errorName: 'Expired', args: [] })
    expect((await send(0, ROUTER, data)).status).toBe('reverted')
  })

  it('rejects pools that are not the factory\'s pool for the hop\'s tokens (and fee)', async () => {
    const weth = registry.weth
    const usdc = token('USDC')
    const v3Pool = v3('WETH', 'USDC', 500).pool
    const v2Pair = v2('WETH', 'USDC').pool
    const cases: OnchainHop[] = [
      { protocol: 0, pool: v3Pool, tokenOut: usdc, fee: 3000 }, // a real pool, but not the V2 pair
      { protocol: 0, pool: token('DAI'), tokenOut: usdc, fee: 3000 }, // any contract
      { protocol: 0, pool: v2('WETH', 'DAI').pool, tokenOut: usdc, fee: 3000 }, // a real pair of other tokens
      { protocol: 1, pool: v2Pair, tokenOut: usdc, fee: 500 },
      { protocol: 1, pool: v3Pool, tokenOut: usdc, fee: 3000 }, // the 0.05% pool claimed as 0.3%
      { protocol: 1, pool: account(9).address, tokenOut: usdc, fee: 500 },
      // a V4 hop names the router's PoolManager, nothing else: a V3 pool, any account
      { protocol: 2, pool: v3Pool, tokenOut: usdc, fee: 3000, tickSpacing: 60 },
      { protocol: 2, pool: account(9).address, tokenOut: usdc, fee: 3000, tickSpacing: 60 },
    ]
    for (const hop of cases) {
      const data = rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: 10n ** 18n, legs: [{ amountIn: 10n ** 18n, hops: [hop] }] })
      expect(await revertOf(account(0).address, data), JSON.stringify(hop)).toEqual({ errorName: 'InvalidPool', args: [hop.pool] })
    }
    // also as a later hop, whose pool is checked before any token moves to it
    const second: OnchainHop = { protocol: 0, pool: v2('USDC', 'USDT').pool, tokenOut: token('DAI'), fee: 3000 }
    const data = rawSwapCall({ tokenIn: weth, tokenOut: token('DAI'), amountIn: 10n ** 18n, legs: [{ amountIn: 10n ** 18n, hops: [onchainHop(v2('WETH', 'USDC')), second] }] })
    expect(await revertOf(account(0).address, data)).toEqual({ errorName: 'InvalidPool', args: [second.pool] })
    // a pair the factory could have, but that does not exist (no code): rejected, nothing lost
    const ghost = rawSwapCall({ tokenIn: token('UNI'), tokenOut: token('LINK'), amountIn: 10n ** 18n, legs: [{ amountIn: 10n ** 18n, hops: [{ protocol: 0, pool: pairFor(token('UNI'), token('LINK')), tokenOut: token('LINK'), fee: 3000 }] }] })
    expect((await revertOf(account(0).address, ghost)).errorName).toBe('InvalidPool')
  })

  it('names hooks only in V4 hops, a native ETH V4 hop only beside WETH, and takes ETH only from WETH and the PoolManager', async () => {
    const from = account(0).address
    const one = 10n ** 18n
    const poolManager = getAddress(registry.v4.poolManager)
    const hooks = getAddress(registry.v4.hooks[0]!.address)
    // a V2 or V3 hop that names a hook contract
    for (const h of [onchainHop(v2('WETH', 'USDC')), onchainHop(v3('WETH', 'USDC', 500))]) {
      const data = rawSwapCall({ tokenIn: registry.weth, tokenOut: token('USDC'), amountIn: one, legs: [{ amountIn: one, hops: [{ ...h, hooks }] }] })
      expect(await revertOf(from, data)).toEqual({ errorName: 'InvalidPool', args: [getAddress(h.pool)] })
    }
    // protocol 3 (native ETH in the key) on a pair without WETH
    const usdcUsdt = rawSwapCall({ tokenIn: token('USDC'), tokenOut: token('USDT'), amountIn: 10n ** 9n, legs: [{ amountIn: 10n ** 9n, hops: [{ protocol: 3, pool: poolManager, tokenOut: token('USDT'), fee: 800, tickSpacing: 1 }] }] })
    expect(await revertOf(from, usdcUsdt)).toEqual({ errorName: 'InvalidPool', args: [poolManager] })
    // plain ETH from anyone else
    expect(await revertOf(from, '0x', { value: 1n })).toEqual({ errorName: 'UnexpectedEth', args: [] })
  })

  it('answers unlockCallback only for the PoolManager during its own unlock (a direct call, or the PoolManager outside a swap, is refused)', async () => {
    const data = encodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, functionName: 'unlockCallback', args: ['0x'] })
    expect(await revertOf(account(0).address, data)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    // even from the PoolManager's own address: no unlock of ours is in flight
    expect(await revertOf(registry.v4.poolManager as Hex, data)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    expect(await read<unknown>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'poolManager')).toBe(getAddress(registry.v4.poolManager))
  })

  it('rejects malformed plans: amounts that do not add up, 0 or 4 hops, a wrong last token, an unknown protocol', async () => {
    const weth = registry.weth
    const usdc = token('USDC')
    const hop = onchainHop(v2('WETH', 'USDC'))
    const one = 10n ** 18n
    const from = account(0).address
    expect(await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: one, legs: [{ amountIn: one - 1n, hops: [hop] }] }))).toEqual({
      errorName: 'AmountInMismatch',
      args: [one - 1n, one],
    })
    expect(await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: 0n, legs: [] }))).toEqual({ errorName: 'EmptyPlan', args: [] })
    expect(await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: one, legs: [{ amountIn: one, hops: [] }] }))).toEqual({ errorName: 'InvalidHopCount', args: [0n] })
    const back = onchainHop(v2('USDC', 'WETH'))
    expect(await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: one, legs: [{ amountIn: one, hops: [hop, back, hop, back] }] }))).toEqual({
      errorName: 'InvalidHopCount',
      args: [4n],
    })
    expect(await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: token('DAI'), amountIn: one, legs: [{ amountIn: one, hops: [hop] }] }))).toEqual({ errorName: 'PathMismatch', args: [usdc] })
    expect(await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: one, legs: [{ amountIn: one, hops: [{ ...hop, protocol: 4 }] }] }))).toEqual({
      errorName: 'InvalidProtocol',
      args: [4],
    })
    // recipient = the router itself would strand the output
    expect((await revertOf(from, rawSwapCall({ tokenIn: weth, tokenOut: usdc, amountIn: one, legs: [{ amountIn: one, hops: [hop] }] }, 0n, ROUTER))).errorName).toBe('InvalidRecipient')
  })

  it("swaps on the 25-bps fork venue's pair at that venue's fee, in one leg with a Uniswap pool", async () => {
    const fork = v2v3Venues(registry).find((v) => v.name === 'devnet-fork-v2')!
    const [weth, usdc] = [registry.weth, token('USDC')]
    const pair = fork.pairs!.find((p) => new Set([p.token0, p.token1]).has(weth) && new Set([p.token0, p.token1]).has(usdc))!
    const [r0, r1] = await read<readonly [bigint, bigint, number]>(pair.address, V2_PAIR_RESERVES, 'getReserves')
    const zeroForOne = BigInt(weth) < BigInt(usdc)
    const [rin, rout] = zeroForOne ? [r0, r1] : [r1, r0]
    const amountIn = parseEther('1')
    const expected = getAmountOut(amountIn, rin, rout, 25)
    // the venue's fee, not Uniswap's: 30 bps would pay less
    expect(expected).toBeGreaterThan(getAmountOut(amountIn, rin, rout, 30))
    const forkHop: PlanHop = { protocol: 'uniswap-v2', pool: pair.address, tokenIn: weth, tokenOut: usdc, fee: 2500, zeroForOne }
    const result = await swap(0, plan(leg(amountIn, forkHop)), { minAmountOut: expected })
    expect(result.amountOut).toBe(expected)
    gas['fork v2 1 hop (25 bps)'] = result.receipt.gasUsed

    // WETH -> USDC at the fork, USDC -> USDT at Uniswap's V3 0.05%: both pools proven, one leg
    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    const expectedUsdt = await v3Quote(expected, 'USDC', 'USDT', 500)
    const crossing = await swap(0, plan(leg(amountIn, forkHop, v3('USDC', 'USDT', 500))), { minAmountOut: expectedUsdt })
    expect(crossing.amountOut).toBe(expectedUsdt)
  })

  it('pays a V3 callback only to the pool it is swapping with: direct calls are rejected, approvals stay safe', async () => {
    const victim = account(0).address
    const pool = v3('WETH', 'USDC', 500).pool
    const cb = (payer: Hex) =>
      encodeFunctionData({
        abi: SWAP_PLAN_ROUTER_ABI,
        functionName: 'uniswapV3SwapCallback',
        // what the router itself would pass: (token, payer)
        args: [10n ** 18n, 0n, encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [registry.weth, payer])],
      })
    // from an EOA, from a genuine pool address outside a swap (impersonated), and mined for real
    expect(await revertOf(account(9).address, cb(victim))).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    // PancakeSwap's callback name is guarded alike
    const pancake = encodeFunctionData({
      abi: SWAP_PLAN_ROUTER_ABI,
      functionName: 'pancakeV3SwapCallback',
      args: [10n ** 18n, 0n, encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [registry.weth, victim])],
    })
    expect(await revertOf(account(9).address, pancake)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    expect(await revertOf(pool, pancake)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    expect(await revertOf(pool, cb(victim))).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    const before = await balanceOf(registry.weth, victim)
    expect((await send(9, ROUTER, cb(victim))).status).toBe('reverted')
    expect(await balanceOf(registry.weth, victim)).toBe(before)
  })

  it('runs the post-swap call after paying the recipient, from the proxy, in the same transaction', async () => {
    const proxy = await read<Hex>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'postCallProxy')
    // a stand-in backrun: sync() on another pair, and a zero transfer that shows who the caller is
    const p = plan(leg(parseEther('1'), v2('WETH', 'USDC')))
    const marker = account(9).address
    const postCall: PostSwapCall = { target: token('DAI'), data: encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [marker, 0n] }) }
    const { receipt } = await swap(0, p, { postCall })
    const routerLog = receipt.logs.findIndex((l) => l.address.toLowerCase() === ROUTER.toLowerCase())
    const transferLog = receipt.logs.findIndex((l) => l.address.toLowerCase() === token('DAI').toLowerCase())
    expect(routerLog).toBeGreaterThanOrEqual(0)
    expect(transferLog).toBeGreaterThan(routerLog)
    const transfer = decodeEventLog({
      abi: [{ type: 'event', name: 'Transfer', inputs: [{ name: 'from', type: 'address', indexed: true }, { name: 'to', type: 'address', indexed: true }, { name: 'value', type: 'uint256', indexed: false }] }],
      data: receipt.logs[transferLog]!.data,
      topics: receipt.logs[transferLog]!.topics,
    })
    expect(transfer.args).toEqual({ from: proxy, to: marker, value: 0n })

    const sync = { target: v2('WETH', 'DAI').pool, data: encodeFunctionData({ abi: V2_PAIR, functionName: 'sync' }) }
    const { receipt: second } = await swap(1, p, { postCall: sync })
    expect(second.logs.some((l) => l.address.toLowerCase() === sync.target.toLowerCase())).toBe(true)
    gas['v2 1 hop + post call (pair.sync)'] = second.gasUsed
  })

  it('bubbles up the post call\'s revert, and the post call cannot use the approvals users gave the router', async () => {
    const victim = account(3).address
    const attacker = account(9).address
    const p = plan(leg(parseEther('1'), v2('WETH', 'USDC')))
    // the classic drain: token.transferFrom(victim, attacker) from the approved router. It runs
    // from the proxy, which nobody approved, so the token refuses and the whole swap reverts.
    const drain: PostSwapCall = { target: registry.weth, data: encodeFunctionData({ abi: ERC20_FROM_ABI, functionName: 'transferFrom', args: [victim, attacker, 1n] }) }
    const data = encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: FAR_DEADLINE, postCall: drain })
    const usdc = token('USDC')
    const drainUsdc: PostSwapCall = { target: usdc, data: encodeFunctionData({ abi: ERC20_FROM_ABI, functionName: 'transferFrom', args: [victim, attacker, 1n] }) }
    expect(await revertOf(attacker, encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: FAR_DEADLINE, postCall: drainUsdc }))).toEqual({
      errorName: 'Error',
      args: ['DevnetERC20: insufficient allowance'],
    })
    // the devnet's WETH9 (v2-periphery's test build) reverts with an empty Error(""): passed on as it is
    expect(await revertOf(attacker, data)).toEqual({ errorName: 'Error', args: [''] })
    const before = await balanceOf(usdc, victim)
    expect((await send(9, ROUTER, encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: FAR_DEADLINE, postCall: drainUsdc }))).status).toBe('reverted')
    expect(await balanceOf(usdc, victim)).toBe(before)
    // a custom error of the target comes back verbatim too (here the proxy's own, called by a stranger)
    const proxy = await read<Hex>(ROUTER, SWAP_PLAN_ROUTER_ABI, 'postCallProxy')
    const forward = encodeFunctionData({ abi: PROXY_ABI, functionName: 'forward', args: [usdc, drainUsdc.data] })
    expect(await revertOf(attacker, encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: FAR_DEADLINE, postCall: { target: proxy, data: forward } }))).toEqual({
      errorName: 'OnlyRouter',
      args: [],
    })
    expect(await revertOf(attacker, forward, { to: proxy })).toEqual({ errorName: 'OnlyRouter', args: [] })
  })

  it('blocks reentrancy: a post call back into swap() reverts with Reentrancy()', async () => {
    const p = plan(leg(parseEther('1'), v2('WETH', 'USDC')))
    const inner = encodeSwapPlanCall({ plan: plan(leg(parseUnits('100', 6), v2('USDC', 'WETH'))), minAmountOut: 0n, deadline: FAR_DEADLINE })
    const data = encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: FAR_DEADLINE, postCall: { target: ROUTER, data: inner } })
    expect(await revertOf(account(0).address, data)).toEqual({ errorName: 'Reentrancy', args: [] })
    // and the callback, not armed outside a V3 hop, refuses the post call too
    const cb = encodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, functionName: 'uniswapV3SwapCallback', args: [1n, 0n, '0x'] })
    expect(await revertOf(account(0).address, encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: FAR_DEADLINE, postCall: { target: ROUTER, data: cb } }))).toEqual({
      errorName: 'UnexpectedCallback',
      args: [],
    })
  })
})

const ERC20_FROM_ABI = [
  {
    type: 'function',
    name: 'transferFrom',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [{ type: 'bool' }],
  },
] as const satisfies Abi

/** The V2 factory's CREATE2 address for a pair (whether or not it exists). */
function pairFor(a: Hex, b: Hex): Hex {
  const [t0, t1] = BigInt(a) < BigInt(b) ? [a, b] : [b, a]
  return getCreate2Address({ from: registry.v2.factory, salt: keccak256(encodePacked(['address', 'address'], [t0, t1])), bytecodeHash: registry.v2.pairInitCodeHash })
}
