/**
 * The fork cache seen from the simulator: a repeated simulation makes no upstream call, an
 * upstream failure surfaces as the typed UpstreamError (never as a reverted or rejected
 * transaction), and after the upstream mines a block that changes a pool, a new simulation sees it.
 */
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { ForkStateSource } from '../../src/chain/fork/index.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import { UpstreamError, type Address, type Hex } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { GENESIS_PATH, loadFixtureTxs, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const ROUTER_ABI = parseAbi(['function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[])'])
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'
const quoteCall = () => ({
  from: VIEWER,
  to: lower(registry.v2.router02),
  data: encodeFunctionData({
    abi: ROUTER_ABI,
    functionName: 'getAmountsOut',
    args: [10n ** 18n, [tokenAddress(registry, 'WETH'), tokenAddress(registry, 'USDC')]],
  }),
})
const amountOut = (data: Uint8Array) =>
  (decodeFunctionResult({ abi: ROUTER_ABI, functionName: 'getAmountsOut', data: bytesToHexString(data) }) as readonly bigint[])[1]

describe('simulation on a fork of anvil', () => {
  let anvil: AnvilInstance
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
  })
  afterAll(() => anvil?.stop())

  it('a repeated simulation makes no upstream call', async () => {
    const source = await ForkStateSource.create({ url: anvil.url, blockNumber: 0n })
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    const first = await sim.call(sim.openState(source.latest()), quoteCall())
    expect(first.status).toBe('success')
    const cold = source.stats()
    expect(cold.rpcCalls).toBeGreaterThan(0)
    const second = await sim.call(sim.openState(source.latest()), quoteCall())
    expect(amountOut(second.returnData)).toBe(amountOut(first.returnData))
    expect(source.stats().rpcCalls).toBe(cold.rpcCalls)
    expect(source.stats().httpRequests).toBe(cold.httpRequests)
    await source.close()
  })

  it('after the upstream mines a block that changes a pool, a new simulation sees the new state', async () => {
    const source = await ForkStateSource.create({ url: anvil.url, blockNumber: 'latest', pollIntervalMs: 50 })
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    const before = amountOut((await sim.call(sim.openState(source.latest()), quoteCall())).returnData)
    const oldReader = source.latest()

    // a large WETH -> USDC swap through the V2 pair lands on the upstream
    const swap = loadFixtureTxs().find((t) => t.name === 'v2-swapExactETHForTokens-large')
    if (!swap) throw new Error('fixture v2-swapExactETHForTokens-large missing')
    await anvilRpc(anvil.url, 'eth_sendRawTransaction', [swap.raw])
    await anvilRpc(anvil.url, 'evm_mine', [])
    const head = BigInt(await anvilRpc<Hex>(anvil.url, 'eth_blockNumber'))

    const deadline = Date.now() + 5_000
    while (source.latest().block.number < head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(source.latest().block.number).toBe(head)

    const after = amountOut((await sim.call(sim.openState(source.latest()), quoteCall())).returnData)
    const onAnvil = amountOut(
      Uint8Array.from(Buffer.from((await anvilRpc<Hex>(anvil.url, 'eth_call', [{ to: quoteCall().to, data: quoteCall().data }, 'latest'])).slice(2), 'hex')),
    )
    expect(after).toBeLessThan(before)
    expect(after).toBe(onAnvil)
    // a reader handed out before the new head still reads its own block
    expect(amountOut((await sim.call(sim.openState(oldReader), quoteCall())).returnData)).toBe(before)
    await source.close()
  })
})

describe('an upstream failure during a simulation', () => {
  let server: Server
  let url: string
  let failing = false
  let anvil: AnvilInstance
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    // a proxy to anvil that starts answering JSON-RPC errors on demand
    server = createServer(async (req, res) => {
      let body = ''
      for await (const chunk of req) body += chunk
      if (failing) {
        const requests = JSON.parse(body) as Array<{ id: number }> | { id: number }
        const error = (id: number) => ({ jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } })
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(Array.isArray(requests) ? requests.map((r) => error(r.id)) : error(requests.id)))
        return
      }
      const upstream = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      res.setHeader('content-type', 'application/json')
      res.end(await upstream.text())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  })
  afterAll(async () => {
    await new Promise((r) => server?.close(r))
    await anvil?.stop()
  })

  it('surfaces as UpstreamError, not as a reverted or rejected transaction', async () => {
    const source = await ForkStateSource.create({ url, blockNumber: 0n, maxRetries: 0 })
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    failing = true
    const err = await sim.call(sim.openState(source.latest()), quoteCall()).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UpstreamError)
    expect((err as UpstreamError).reason).toBe('rpc')
    failing = false
    // the same simulation succeeds once the upstream answers again
    expect((await sim.call(sim.openState(source.latest()), quoteCall())).status).toBe('success')
    await source.close()
  })
})
