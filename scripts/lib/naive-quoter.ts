/**
 * The naive peer of bench:quote, run as its own process: a quoter that, like a service built on
 * Uniswap's QuoterV2, executes a quote in the EVM for every candidate path (QuoterV2
 * quoteExactInputSingle for V3 hops, Router02.getAmountsOut for V2 hops, hop by hop) and answers
 * the best single path. It uses the same state, pool discovery and candidate paths as the service,
 * so only the quoting differs.
 *
 *   PORT=0 npx tsx scripts/lib/naive-quoter.ts   # prints "listening http://127.0.0.1:<port>"
 */
import Fastify from 'fastify'
import { readFileSync } from 'node:fs'
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import type { SimulationState } from '../../src/evm/simulator.ts'
import { buildPoolGraph, enumeratePaths, VIEW_CALLER, type PathHop } from '../../src/pools/index.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'

const QUOTER_V2_ABI = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
])
const ROUTER02_ABI = parseAbi(['function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)'])

export class NaiveEvmQuoter {
  constructor(
    private readonly services: DomainServices,
    private readonly quoterV2: Address,
    private readonly router02: Address,
  ) {}

  async quote(tokenIn: Address, tokenOut: Address, amountIn: bigint): Promise<{ amountOut: bigint; paths: number; evmCalls: number }> {
    const { simulator, routing, chain } = this.services
    const reader = chain.latest()
    // the snapshots serve only to know which pools exist and hold liquidity
    const { pools } = await routing.loadPools(reader, tokenIn, tokenOut)
    const paths = enumeratePaths(buildPoolGraph(pools), tokenIn, tokenOut, 3)
    const state = simulator.openState(reader)
    let best = 0n
    let evmCalls = 0
    for (const path of paths) {
      let amount: bigint | undefined = amountIn
      for (const hop of path) {
        evmCalls++
        amount = await this.quoteHop(state, hop, amount)
        if (amount === undefined) break
      }
      if (amount !== undefined && amount > best) best = amount
    }
    return { amountOut: best, paths: paths.length, evmCalls }
  }

  private async quoteHop(state: SimulationState, hop: PathHop, amountIn: bigint): Promise<bigint | undefined> {
    const { simulator } = this.services
    if (hop.pool.protocol === 'uniswap-v3') {
      const data = encodeFunctionData({ abi: QUOTER_V2_ABI, functionName: 'quoteExactInputSingle', args: [{ tokenIn: hop.tokenIn, tokenOut: hop.tokenOut, amountIn, fee: hop.pool.fee, sqrtPriceLimitX96: 0n }] })
      const r = await simulator.call(state, { from: VIEW_CALLER, to: this.quoterV2, data })
      if (r.status !== 'success') return undefined
      return decodeFunctionResult({ abi: QUOTER_V2_ABI, functionName: 'quoteExactInputSingle', data: bytesToHexString(r.returnData) })[0]
    }
    const data = encodeFunctionData({ abi: ROUTER02_ABI, functionName: 'getAmountsOut', args: [amountIn, [hop.tokenIn, hop.tokenOut]] })
    const r = await simulator.call(state, { from: VIEW_CALLER, to: this.router02, data })
    if (r.status !== 'success') return undefined
    return decodeFunctionResult({ abi: ROUTER02_ABI, functionName: 'getAmountsOut', data: bytesToHexString(r.returnData) })[1]
  }
}

async function main() {
  const config = loadConfig({ LOG_LEVEL: 'silent' })
  const registry = JSON.parse(readFileSync(config.devnet.registryPath, 'utf8')) as { v2: { router02: string }; v3: { quoterV2: string } }
  const services = await openDomainServices(config, { log: { warn: () => {} } })
  const naive = new NaiveEvmQuoter(services, registry.v3.quoterV2.toLowerCase() as Address, registry.v2.router02.toLowerCase() as Address)
  const app = Fastify({ logger: false })
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.post<{ Body: { tokenIn: string; tokenOut: string; amountIn: string } }>('/v1/quote', async (req) => {
    const q = await naive.quote(req.body.tokenIn.toLowerCase() as Address, req.body.tokenOut.toLowerCase() as Address, BigInt(req.body.amountIn))
    return { amountOut: q.amountOut.toString(), paths: q.paths, evmCalls: q.evmCalls }
  })
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
  const address = app.server.address()
  if (address === null || typeof address !== 'object') throw new Error('no address')
  console.log(`listening http://127.0.0.1:${address.port}`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
