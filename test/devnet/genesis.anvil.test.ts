/**
 * anvil (an EVM we did not write) loads fixtures/devnet/genesis.json and finds what the registry
 * promises: code at every address, the recorded reserves, sqrt prices, liquidity and positions,
 * the Uniswap V4 pools in the PoolManager, the ETH/USD feed, 64 funded and approved dev accounts (searcher keys named), working routers and quoter, and no
 * arbitrage anywhere at genesis.
 */
import { createPublicClient, http, maxUint256, parseEther, zeroAddress, type Abi, type Hex, type PublicClient } from 'viem'
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { bestCycle, readPoolPrices } from '../../scripts/devnet/arbitrage.ts'
import { ERC20_ABI, foundryArtifact, npmArtifact, projectArtifact } from '../../scripts/devnet/artifacts.ts'
import { decodeV4Slot0, v4LiquiditySlot, v4PoolId, v4Slot0Slot } from '../../src/pools/uniswap-v4-slots.ts'
import { v4HookPermissions } from '../../src/pools/uniswap-v4-hooks.ts'
import { GENESIS_PATH, REGISTRY_PATH } from '../../scripts/devnet/paths.ts'
import { readRegistry, tokenBySymbol } from '../../scripts/devnet/registry.ts'

const registry = readRegistry(REGISTRY_PATH)
const V2_PAIR = npmArtifact('@uniswap/v2-core/build/UniswapV2Pair.json').abi
const V2_ROUTER = npmArtifact('@uniswap/v2-periphery/build/UniswapV2Router02.json').abi
const V3_POOL = npmArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json').abi
const NPM = npmArtifact('@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json').abi
const QUOTER_V2 = npmArtifact('@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json').abi
const FEED = projectArtifact('DevnetPriceFeed').abi
const V4_POOL_MANAGER = foundryArtifact('@uniswap/v4-core', 'PoolManager').abi

describe('devnet genesis on anvil', () => {
  let anvil: AnvilInstance
  let client: PublicClient
  const read = <T>(address: Hex, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
    client.readContract({ address, abi, functionName, args }) as Promise<T>

  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
    client = createPublicClient({ transport: http(anvil.url) })
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  it('serves the genesis block with the configured chain, time and fees', async () => {
    expect(await client.getChainId()).toBe(registry.chainId)
    const block = await client.getBlock({ blockNumber: 0n })
    expect(block.timestamp).toBe(BigInt(registry.genesisTimestamp))
    expect(block.gasLimit).toBe(30_000_000n)
    expect(block.baseFeePerGas).toBe(1_000_000_000n)
  })

  it('has code at every contract address of the registry', async () => {
    const addresses: Hex[] = [
      ...registry.tokens.map((t) => t.address),
      registry.v2.factory,
      registry.v2.router02,
      ...registry.v2.pairs.map((p) => p.address),
      registry.v3.factory,
      registry.v3.positionManager,
      registry.v3.swapRouter,
      registry.v3.swapRouter02,
      registry.v3.quoterV2,
      ...registry.v3.pools.map((p) => p.address),
      registry.ethUsdFeed.address,
      ...Object.values(registry.extensions),
    ]
    for (const address of addresses) expect((await client.getCode({ address }))?.length ?? 0, address).toBeGreaterThan(2)
  })

  it('has the recorded V2 reserves, older than the genesis', async () => {
    expect(registry.v2.pairs.length).toBeGreaterThanOrEqual(6)
    for (const pair of registry.v2.pairs) {
      const [r0, r1, last] = await read<[bigint, bigint, number]>(pair.address, V2_PAIR, 'getReserves')
      expect([r0.toString(), r1.toString()], pair.name).toEqual([pair.reserve0, pair.reserve1])
      expect(BigInt(last)).toBeLessThan(BigInt(registry.genesisTimestamp))
      expect(await read<Hex>(pair.address, V2_PAIR, 'token0')).toBe(pair.token0)
      expect(await read<Hex>(pair.address, V2_PAIR, 'token1')).toBe(pair.token1)
    }
  })

  it('has the recorded V3 prices, liquidity and positions across the three fee tiers', async () => {
    expect(new Set(registry.v3.pools.map((p) => p.fee))).toEqual(new Set([500, 3000, 10000]))
    for (const pool of registry.v3.pools) {
      const slot0 = await read<[bigint, number]>(pool.address, V3_POOL, 'slot0')
      expect([slot0[0].toString(), slot0[1]], pool.name).toEqual([pool.sqrtPriceX96, pool.tick])
      expect((await read<bigint>(pool.address, V3_POOL, 'liquidity')).toString(), pool.name).toBe(pool.liquidity)
      expect(await read<number>(pool.address, V3_POOL, 'fee')).toBe(pool.fee)
      expect(await read<number>(pool.address, V3_POOL, 'tickSpacing')).toBe(pool.tickSpacing)
      expect(pool.positions.length).toBeGreaterThanOrEqual(3)
      for (const position of pool.positions) {
        const p = await read<readonly unknown[]>(registry.v3.positionManager, NPM, 'positions', [BigInt(position.tokenId)])
        // positions(): nonce, operator, token0, token1, fee, tickLower, tickUpper, liquidity, ...
        expect([p[2], p[3], p[4], p[5], p[6], (p[7] as bigint).toString()]).toEqual([
          pool.token0,
          pool.token1,
          pool.fee,
          position.tickLower,
          position.tickUpper,
          position.liquidity,
        ])
      }
    }
  })

  it('has the Uniswap V4 PoolManager with the recorded pools, read through extsload at StateLibrary\'s slots', async () => {
    for (const address of [registry.v4.poolManager, registry.v4.poolSwapTest, registry.v4.poolModifyLiquidityTest]) {
      expect((await client.getCode({ address }))?.length ?? 0, address).toBeGreaterThan(2)
    }
    expect(registry.v4.pools.length).toBeGreaterThanOrEqual(5)
    // one pool of native ETH, one at a fee and spacing no V3 factory has, two with hooks and dynamic fees
    expect(registry.v4.pools.some((p) => p.currency0 === zeroAddress)).toBe(true)
    expect(registry.v4.pools.some((p) => p.fee === 1200 && p.tickSpacing === 24)).toBe(true)
    expect(registry.v4.pools.filter((p) => p.hooks !== zeroAddress).map((p) => p.fee)).toEqual([0x800000, 0x800000])
    const extsload = (slot: Hex) => read<Hex>(registry.v4.poolManager, V4_POOL_MANAGER, 'extsload', [slot]).then(BigInt)
    for (const pool of registry.v4.pools) {
      // a hook is one of the registry's, deployed, at an address whose low 14 bits are its permissions
      const hook = registry.v4.hooks.find((h) => h.address === pool.hooks)
      expect(pool.hooks === zeroAddress || (hook !== undefined && v4HookPermissions(hook.address).join() === hook.permissions.join()), pool.name).toBe(true)
      if (hook !== undefined) expect((await client.getCode({ address: hook.address }))?.length ?? 0, hook.name).toBeGreaterThan(2)
      expect(pool.fee === 0x800000 ? pool.hooks !== zeroAddress : pool.lpFee === pool.fee, pool.name).toBe(true)
      expect(BigInt(pool.currency0)).toBeLessThan(BigInt(pool.currency1))
      expect(v4PoolId(pool)).toBe(pool.poolId)
      const slot0 = decodeV4Slot0(await extsload(v4Slot0Slot(pool.poolId)))
      expect(slot0, pool.name).toEqual({ sqrtPriceX96: BigInt(pool.sqrtPriceX96), tick: pool.tick, protocolFee: 0, lpFee: pool.lpFee })
      expect((await extsload(v4LiquiditySlot(pool.poolId))).toString(), pool.name).toBe(pool.liquidity)
      // in-range liquidity is the sum of the positions around the price
      const inRange = pool.positions.filter((p) => p.tickLower <= pool.tick && pool.tick < p.tickUpper).reduce((sum, p) => sum + BigInt(p.liquidity), 0n)
      expect(inRange.toString(), pool.name).toBe(pool.liquidity)
    }
  })

  it('answers latestRoundData from the ETH/USD feed at 3000 USD with 8 decimals', async () => {
    const feed = registry.ethUsdFeed
    expect(await read<number>(feed.address, FEED, 'decimals')).toBe(8)
    expect(await read<string>(feed.address, FEED, 'description')).toBe('ETH / USD')
    const [roundId, answer, startedAt, updatedAt, answeredInRound] = await read<bigint[]>(feed.address, FEED, 'latestRoundData')
    expect(answer).toBe(3000n * 10n ** 8n)
    expect(roundId).toBe(answeredInRound)
    expect(updatedAt).toBe(BigInt(registry.genesisTimestamp))
    expect(startedAt).toBe(updatedAt)
    expect(await read<bigint[]>(feed.address, FEED, 'getRoundData', [roundId])).toEqual([roundId, answer, startedAt, updatedAt, answeredInRound])
  })

  it('has 64 dev accounts m/44\'/60\'/0\'/0/0..63 of the public mnemonic, and reserves [8, 56..63] as searcher keys', () => {
    const { accounts, searcherIndexes, mnemonic, derivationPath } = registry.devAccounts
    expect(derivationPath).toBe("m/44'/60'/0'/0/{index}")
    expect(accounts).toHaveLength(64)
    expect(accounts.map((a) => a.index)).toEqual([...Array(64).keys()])
    expect(accounts[0]!.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    for (const a of accounts) {
      const derived = mnemonicToAccount(mnemonic, { addressIndex: a.index })
      expect(a.address, `account ${a.index}`).toBe(derived.address)
      expect(privateKeyToAccount(a.privateKey).address).toBe(derived.address)
    }
    expect(new Set(accounts.map((a) => a.address.toLowerCase())).size).toBe(64)
    expect(searcherIndexes).toEqual([8, 56, 57, 58, 59, 60, 61, 62, 63])
  })

  it('funds every dev account with ETH and every token, max-approved to the routers, at nonce 0', async () => {
    expect(registry.devAccounts.accounts).toHaveLength(64)
    await Promise.all(
      registry.devAccounts.accounts.map(async (account) => {
        expect((await client.getBalance({ address: account.address })).toString()).toBe(registry.devAccounts.balances.ETH)
        expect(await client.getTransactionCount({ address: account.address })).toBe(0)
        for (const token of registry.tokens) {
          expect((await read<bigint>(token.address, ERC20_ABI, 'balanceOf', [account.address])).toString(), `${account.index} ${token.symbol}`).toBe(registry.devAccounts.balances[token.symbol])
          for (const spender of registry.devAccounts.approvedSpenders) {
            expect(await read<bigint>(token.address, ERC20_ABI, 'allowance', [account.address, spender.address]), `${account.index} ${token.symbol} ${spender.name}`).toBe(maxUint256)
          }
        }
      }),
    )
  })

  it('quotes through Router02 and QuoterV2 (the periphery finds the pairs and pools)', async () => {
    const weth = registry.weth
    const usdc = tokenBySymbol(registry, 'USDC').address
    const amounts = await read<bigint[]>(registry.v2.router02, V2_ROUTER, 'getAmountsOut', [parseEther('1'), [weth, usdc]])
    expect(amounts[1]! > 2_900_000_000n && amounts[1]! < 3_100_000_000n).toBe(true)
    const { result } = await client.simulateContract({
      address: registry.v3.quoterV2,
      abi: QUOTER_V2,
      functionName: 'quoteExactInputSingle',
      args: [{ tokenIn: weth, tokenOut: usdc, amountIn: parseEther('1'), fee: 500, sqrtPriceLimitX96: 0n }],
    })
    const amountOut = (result as readonly bigint[])[0]!
    expect(amountOut > 2_900_000_000n && amountOut < 3_100_000_000n).toBe(true)
  })

  it('has no arbitrage around any cycle of two or three pools at genesis', async () => {
    const best = bestCycle(await readPoolPrices(anvil.url, registry, '0x0'))
    expect(best.edgePpm, JSON.stringify(best)).toBeLessThan(0)
  })

  it('prices the same pair differently on V2 and V3, by up to about 1%', async () => {
    const prices = await readPoolPrices(anvil.url, registry, '0x0')
    const weth = registry.weth
    const link = tokenBySymbol(registry, 'LINK').address
    // V2 and V3 (the V4 hooked pool of the pair sits at the reference price between them)
    const ofPair = prices.filter((p) => [p.token0, p.token1].includes(weth) && [p.token0, p.token1].includes(link) && !p.name.startsWith('V4 '))
    expect(ofPair).toHaveLength(2)
    const [a, b] = ofPair.map((p) => p.price!)
    // |a/b - 1| in ppm
    const diffPpm = ((a!.num * b!.den - b!.num * a!.den) * 1_000_000n) / (b!.num * a!.den)
    expect(diffPpm < 0n ? -diffPpm : diffPpm).toBeGreaterThan(5_000n)
    expect(await anvilRpc(anvil.url, 'eth_blockNumber')).toBe('0x0')
  })
})
