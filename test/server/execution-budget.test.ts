/**
 * The execution budget end to end (issue 17), on the service started as `npm start` starts it
 * (startNode: domain, local builder, submission, HTTP server), on a copy of the devnet where:
 * - UNI's transfer and transferFrom loop forever (everything else is UNI's own code, delegated to),
 *   so a quote selling UNI executes a loop inside the router's swap;
 * - a contract that loops forever;
 * - blocks hold 1e9 gas, and EVM_MAX_GAS allows it: running out of the whole 1e9 takes longer than
 *   the budget, so what stops the loops is EVM_MAX_MS (300 ms). Each loop's turn hashes a KiB of
 *   memory (242 gas for several microseconds: 1e9 gas is over ten seconds of CPU). (Until 2026-11-28 the
 *   turn was JUMPDEST PUSH JUMP, 12 gas, and the looping submission carried 500M gas: the loop ran
 *   out of it in under 300 ms on an idle machine and the simulation recorded `out of gas` instead.)
 * Checked: the quote answers 422 SIMULATION_FAILED naming the budget, eth_backrun -32000 naming
 * it, a private submission records it as its simulation error, each within the budget; an
 * ordinary quote sent at the same moment as the looping one is answered within the budget plus its
 * own time.
 */
import type { Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import type { ServiceNode } from '../../src/node/start.ts'
import { DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { loadRegistry, lower, tokenAddress } from '../support/devnet.ts'
import { LOOP_CODE, loopTrap, postTimed, startTrappedNode, type TrappedNode } from '../support/trapped-devnet.ts'

const registry = loadRegistry()
const BUDGET_MS = 300
/** what a busy two-core CI machine may add to a deadline (the check itself comes within a millisecond of it) */
const SLACK_MS = 700

const UNI = tokenAddress(registry, 'UNI')
const WETH = tokenAddress(registry, 'WETH')
const USDC = tokenAddress(registry, 'USDC')
const LOOP: Address = '0x000000000000000000000000000000000000100f'

const post = (url: string, body: unknown, headers: Record<string, string> = {}) => postTimed(url, body, headers, 30_000)

describe('execution budget: looping code through the quote, eth_backrun and private submission', () => {
  let trapped: TrappedNode
  let node: ServiceNode
  let url: string

  beforeAll(async () => {
    trapped = await startTrappedNode({ trap: loopTrap, contracts: { [LOOP]: LOOP_CODE }, budgetMs: BUDGET_MS })
    node = trapped.node
    url = trapped.url
    await post(`${url}/v1/quote`, { tokenIn: WETH, tokenOut: USDC, amountIn: '1000' }, { 'x-api-key': DEV_API_KEY }) // warm
    // the looping pair once unmeasured: its first quote also discovers UNI's pools, loads their
    // states and runs code its worker has not compiled yet (354 ms against 314 for the next one on an
    // idle machine; 1,399 ms once in a clean-clone CI run, against the 1,000 ms bound below). The
    // tests time the budget, not a pair's first quote
    await post(`${url}/v1/quote`, { tokenIn: UNI, tokenOut: WETH, amountIn: (10n ** 18n).toString() }, { 'x-api-key': DEV_API_KEY })
  })

  afterAll(async () => {
    await trapped?.close()
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
      gas: 1_000_000_000n,
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
