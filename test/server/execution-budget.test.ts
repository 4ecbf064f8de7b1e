/**
 * The execution budget end to end (issue 17), on the service started as `npm start` starts it
 * (startNode: domain, local builder, submission, HTTP server), on a copy of the devnet where:
 * - UNI's transfer and transferFrom loop forever (everything else is UNI's own code, delegated to),
 *   so a quote selling UNI executes a loop inside the router's swap;
 * - a contract that loops forever;
 * - blocks hold 1e9 gas, and EVM_MAX_GAS allows it: running out of gas would take seconds, so
 *   what stops the loops is EVM_MAX_MS (300 ms).
 * Checked: the quote answers 422 SIMULATION_FAILED naming the budget, eth_backrun -32000 naming
 * it, a private submission records it as its simulation error, each within the budget; an
 * ordinary quote sent at the same moment as the looping one is answered within the budget plus its
 * own time.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { startNode, type ServiceNode } from '../../src/node/start.ts'
import { DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { GENESIS_PATH, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'

const registry = loadRegistry()
const BUDGET_MS = 300
/** what a busy two-core CI machine may add to a deadline (the check itself comes within a millisecond of it) */
const SLACK_MS = 700

const UNI = tokenAddress(registry, 'UNI')
const WETH = tokenAddress(registry, 'WETH')
const USDC = tokenAddress(registry, 'USDC')
/** where UNI's own code goes; UNI's address gets the trap in front of it */
const UNI_IMPL: Address = '0x00000000000000000000000000000000000001a1'
const LOOP: Address = '0x000000000000000000000000000000000000100f'

/**
 * selector == transfer or transferFrom: JUMPDEST PUSH2 loop JUMP forever; anything else:
 * DELEGATECALL to `impl` with the calldata, its return data returned (or reverted with).
 */
function trapToken(impl: Address): string {
  const label = (n: number) => n.toString(16).padStart(4, '0')
  const dispatch = (loop: number) =>
    '600035' + '60e01c' + // selector
    '80' + '63a9059cbb' + '14' + '61' + label(loop) + '57' + // transfer
    '6323b872dd' + '14' + '61' + label(loop) + '57' // transferFrom
  const delegate =
    '36' + '6000' + '6000' + '37' + // calldata to memory
    '6000' + '6000' + '36' + '6000' + '73' + impl.slice(2) + '5a' + 'f4' + // DELEGATECALL
    '3d' + '6000' + '6000' + '3e' + // return data to memory
    '3d' + '6000' + '82' // size, offset, success
  const tail = (ok: number) => '61' + label(ok) + '57' + 'fd' + '5b' + 'f3'
  const probe = dispatch(0) + delegate + tail(0)
  // offsets: the REVERT is followed by JUMPDEST RETURN; the loop follows them
  const ok = probe.length / 2 - 2
  const loop = probe.length / 2
  return '0x' + dispatch(loop) + delegate + tail(ok) + '5b' + '61' + label(loop) + '56'
}

interface WireResponse {
  status: number
  body: Record<string, unknown>
  ms: number
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<WireResponse> {
  const t0 = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, ms: performance.now() - t0 }
}

describe('execution budget: looping code through the quote, eth_backrun and private submission', () => {
  let dir: string
  let node: ServiceNode
  let url: string

  beforeAll(async () => {
    const genesis = JSON.parse(readFileSync(GENESIS_PATH, 'utf8')) as { gasLimit: string; alloc: Record<string, { code?: string; balance: string; storage?: Record<string, string> }> }
    const uniKey = Object.keys(genesis.alloc).find((a) => lower(a.startsWith('0x') ? a : `0x${a}`) === UNI)!
    genesis.alloc[UNI_IMPL.slice(2)] = { code: genesis.alloc[uniKey].code, balance: '0x0' }
    genesis.alloc[uniKey] = { ...genesis.alloc[uniKey], code: trapToken(UNI_IMPL) }
    genesis.alloc[LOOP.slice(2)] = { code: '0x5b600056', balance: '0x0' }
    genesis.gasLimit = '0x3b9aca00'
    dir = mkdtempSync(join(tmpdir(), 'budget-'))
    writeFileSync(join(dir, 'genesis.json'), JSON.stringify(genesis))

    node = await startNode(withWorkersFromEnv({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DEVNET_GENESIS: join(dir, 'genesis.json'),
      DATA_DIR: join(dir, 'data'),
      LOCAL_BUILDER_PORT: '0',
      // no block is built while the test runs: the submission stays on the head it was simulated on
      LOCAL_BUILDER_BLOCK_TIME_MS: '600000',
      // every quote computed afresh: the ordinary quote's own time is measured, not a cache hit
      QUOTE_CACHE_MAX_ENTRIES: '0',
      EVM_MAX_MS: String(BUDGET_MS),
      EVM_MAX_GAS: '1000000000',
    }))
    url = node.url
    await post(`${url}/v1/quote`, { tokenIn: WETH, tokenOut: USDC, amountIn: '1000' }, { 'x-api-key': DEV_API_KEY }) // warm
  })

  afterAll(async () => {
    await node?.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  const quote = (tokenIn: Address, tokenOut: Address, amountIn: bigint) =>
    post(`${url}/v1/quote`, { tokenIn, tokenOut, amountIn: amountIn.toString() }, { 'x-api-key': DEV_API_KEY })
  const ordinary = () => quote(WETH, USDC, 10n ** 18n)
  const looping = () => quote(UNI, WETH, 10n ** 18n)

  it('a quote whose token loops: 422 SIMULATION_FAILED naming EVM_MAX_MS, within the budget', async () => {
    const r = await looping()
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ code: 'QUOTE_ERROR', details: { reason: 'SIMULATION_FAILED', budget: 'time', limit: String(BUDGET_MS) } })
    expect(r.body.message).toMatch(/EVM_MAX_MS/)
    expect(r.ms).toBeGreaterThanOrEqual(BUDGET_MS)
    expect(r.ms).toBeLessThan(BUDGET_MS + SLACK_MS)
  })

  it('an ordinary quote sent at the same moment is answered within the budget plus its own time', async () => {
    await ordinary() // warm
    const own = Math.min((await ordinary()).ms, (await ordinary()).ms)
    const [bad, good] = await Promise.all([looping(), ordinary()])
    expect(bad.status).toBe(422)
    expect(good.status).toBe(200)
    expect(BigInt(good.body.amountOut as string)).toBeGreaterThan(0n)
    console.log(`looping quote ${bad.ms.toFixed(0)} ms, ordinary quote beside it ${good.ms.toFixed(0)} ms (alone ${own.toFixed(0)} ms), budget ${BUDGET_MS} ms`)
    expect(good.ms).toBeLessThan(BUDGET_MS + own + SLACK_MS)
  })

  it('eth_backrun of a call that loops: -32000 naming EVM_MAX_MS, within the budget', async () => {
    const r = await post(`${url}/rpc/${DEV_PARTNER_TOKEN}/backrun`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_backrun',
      params: [{ to: LOOP, calldata: '0x', value: '0', tokenIn: '0x0000000000000000000000000000000000000000', amountIn: '1' }],
    })
    expect(r.status).toBe(200)
    const error = r.body.error as { code: number; message: string; data: unknown }
    expect(error.code).toBe(-32000)
    expect(error.message).toMatch(/wall-clock budget of 300 ms per EVM execution \(EVM_MAX_MS\)/)
    expect(error.data).toEqual({ reason: 'execution_budget', budget: 'time', limit: String(BUDGET_MS) })
    console.log(`eth_backrun answered in ${r.ms.toFixed(0)} ms`)
    expect(r.ms).toBeLessThan(BUDGET_MS + SLACK_MS)
  })

  it('a private submission that loops: its simulation error names EVM_MAX_MS, recorded within the budget', async () => {
    const account = registry.devAccounts.accounts[30]
    const head = node.domain.chain.latest()
    const nonce = (await head.getAccount(lower(account.address)))?.nonce ?? 0n
    const raw = await privateKeyToAccount(account.privateKey).signTransaction({
      chainId: registry.chainId,
      nonce: Number(nonce),
      to: LOOP,
      gas: 500_000_000n,
      maxFeePerGas: 50n * 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
      type: 'eip1559',
    })
    const sentAt = Date.now()
    const ack = await post(`${url}/rpc/${DEV_PARTNER_TOKEN}/submit`, { jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: raw }] })
    const hash = ack.body.result as Hex
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/)

    type Simulation = { at: number; success: boolean; error?: string } | null
    let simulation: Simulation = null
    const end = Date.now() + 20_000
    while (simulation === null && Date.now() < end) {
      const res = await fetch(`${url}/v1/submissions/${hash}`, { headers: { authorization: `Bearer ${DEV_PARTNER_TOKEN}` } })
      const body = (await res.json()) as { submissions: Array<{ simulation: Simulation }> }
      simulation = body.submissions[0]?.simulation ?? null
      if (simulation === null) await new Promise((r) => setTimeout(r, 50))
    }
    expect(simulation).not.toBeNull()
    expect(simulation!.success).toBe(false)
    expect(simulation!.error).toMatch(/^transaction 0: execution stopped after \d+ ms: it exceeded the wall-clock budget of 300 ms per EVM execution \(EVM_MAX_MS\)$/)
    console.log(`submission: simulation error recorded ${simulation!.at - sentAt} ms after it was sent`)
    expect(simulation!.at - sentAt).toBeLessThan(BUDGET_MS + SLACK_MS)
  })
})
