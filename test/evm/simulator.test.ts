/**
 * Simulator behaviour beyond the anvil comparisons: revert reasons, rejected transactions,
 * bundles (atomic, chained, with the failing index), state handles, and overrides (ETH balance,
 * code, ERC-20 balance and allowance found generically).
 */
import { describe, expect, it } from 'vitest'
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Erc20SlotNotFoundError, Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator, TransactionRejectedError, type SimulationState } from '../../src/evm/simulator.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { GENESIS_PATH, loadFixtureTxs, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const sim = new Simulator({ common: commonForChain(source.chainId) })
const fixtures = loadFixtureTxs()
const decode = (raw: Hex) => decodeSignedTransaction(raw, { chainId: source.chainId, common: sim.common }).tx
const fixture = (name: string) => {
  const f = fixtures.find((t) => t.name === name)
  if (!f) throw new Error(`fixture ${name} missing`)
  return f
}
const ERC20 = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address,address) view returns (uint256)',
  'function transferFrom(address,address,uint256) returns (bool)',
])
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'
const STRANGER: Address = '0x000000000000000000000000000000000000dead'

async function balanceOf(state: SimulationState, token: Address, holder: Address): Promise<bigint> {
  const r = await sim.call(state, { from: VIEWER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) })
  return decodeFunctionResult({ abi: ERC20, functionName: 'balanceOf', data: bytesToHexString(r.returnData) })
}

describe('Simulator', () => {
  it('decodes revert reasons of reverted transactions', async () => {
    const r = await sim.transaction(sim.openState(source.latest()), decode(fixture('revert-v2-amountOutMin-too-high').raw))
    expect(r.status).toBe('reverted')
    expect(r.revertReason).toBe('UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT')
    expect(r.logs).toEqual([])
  })

  it('gives the logs of a successful execution as hex, made when first read, also through spreads, clones and calls', async () => {
    const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
    const base = sim.openState(source.latest())
    const r = await sim.transaction(base, decode(fixture('v2-swapExactETHForTokens-small').raw))
    expect(r.status).toBe('success')
    const fresh = await sim.transaction(base, decode(fixture('v2-swapExactETHForTokens-small').raw))
    // a structured clone (as a worker posts it) reads them before anything else has
    const { logs: cloned } = structuredClone(Object.assign(fresh, { state: undefined })) as { logs: unknown }
    expect(r.logs.length).toBeGreaterThan(1)
    expect(r.logs.some((l) => l.topics[0] === TRANSFER)).toBe(true)
    for (const log of r.logs) {
      expect(log.address).toMatch(/^0x[0-9a-f]{40}$/)
      expect(log.data).toMatch(/^0x([0-9a-f]{2})*$/)
      for (const topic of log.topics) expect(topic).toMatch(/^0x[0-9a-f]{64}$/)
    }
    expect(r.logs).toBe(r.logs) // made once
    expect(cloned).toEqual(r.logs)
    expect({ ...r }.logs).toEqual(r.logs)
    // the same swap as a call from the same sender logs the same
    const tx = decode(fixture('v2-swapExactETHForTokens-small').raw)
    const call = await sim.call(base, { from: lower(tx.getSenderAddress().toString()) as Address, to: lower(tx.to!.toString()) as Address, data: tx.data, value: tx.value })
    expect(call.logs).toEqual(r.logs)
    r.logs = []
    expect(r.logs).toEqual([])
  })

  it('rejects a transaction that cannot be included, with an actionable message', async () => {
    const base = sim.openState(source.latest())
    const tx = decode(fixture('v2-swapExactETHForTokens-small').raw)
    const after = await sim.transaction(base, tx)
    // the same signed transaction again: its nonce is now used
    const err = await sim.transaction(after.state, tx).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TransactionRejectedError)
    expect((err as Error).message).toMatch(/nonce/i)
    expect((err as Error).message).not.toMatch(/block number=|tx type=/)
  })

  it('rejects a transaction whose fee cap is below the next base fee', async () => {
    const account = privateKeyToAccount(registry.devAccounts.accounts[7].privateKey)
    const raw = await account.signTransaction({ chainId: registry.chainId, type: 'eip1559', nonce: 0, to: STRANGER, value: 1n, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n })
    const err = await sim.transaction(sim.openState(source.latest()), decode(raw)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TransactionRejectedError)
    expect((err as Error).message).toMatch(/base fee|fee/i)
  })

  it('executes a bundle in order, chaining state, and leaves the parent state untouched', async () => {
    const base = sim.openState(source.latest())
    const usdc = tokenAddress(registry, 'USDC')
    const sender = lower(fixture('v2-swapExactETHForTokens-small').from)
    const before = await balanceOf(base, usdc, sender)
    const txs = ['v2-swapExactETHForTokens-small', 'v3-exactInputSingle-small'].map((n) => decode(fixture(n).raw))
    const bundle = await sim.bundle(base, txs)
    expect(bundle.success).toBe(true)
    expect(bundle.results).toHaveLength(2)
    expect(bundle.gasUsed).toBe(bundle.results[0].gasUsed + bundle.results[1].gasUsed)
    expect(await balanceOf(bundle.state, usdc, sender)).toBeGreaterThan(before)
    expect(await balanceOf(base, usdc, sender)).toBe(before)
  })

  it('reports the index of the first reverting transaction of a bundle', async () => {
    const txs = ['v2-swapExactETHForTokens-small', 'revert-v2-expired-deadline'].map((n) => decode(fixture(n).raw))
    const bundle = await sim.bundle(sim.openState(source.latest()), txs)
    expect(bundle.success).toBe(false)
    expect(bundle.failedIndex).toBe(1)
  })

  it('rejects the whole bundle when a transaction cannot be included, naming its index', async () => {
    const tx = decode(fixture('v2-swapExactETHForTokens-small').raw)
    const err = await sim.bundle(sim.openState(source.latest()), [tx, tx]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TransactionRejectedError)
    expect((err as TransactionRejectedError).index).toBe(1)
  })

  it('applies ETH balance and code overrides', async () => {
    const state = sim.openState(source.latest())
    // CALLER BALANCE PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: returns the caller's balance
    const code = '0x3331600052602060' + '00f3'
    await applyAccountOverrides(state, new Map([
      [STRANGER, { balance: 123n * 10n ** 18n }],
      [VIEWER, { code: code as Hex }],
    ]))
    const r = await sim.call(state, { from: STRANGER, to: VIEWER })
    expect(r.status).toBe('success')
    // calls have eth_call semantics (gas price 0), so the balance is exactly the override
    expect(BigInt(bytesToHexString(r.returnData))).toBe(123n * 10n ** 18n)
  })

  it('sets ERC-20 balances and allowances of any standard token by finding the slots', async () => {
    const writer = new Erc20StateWriter(sim)
    for (const symbol of ['USDC', 'WBTC', 'DAI']) {
      const token = tokenAddress(registry, symbol)
      const state = sim.openState(source.latest())
      await writer.setBalance(state, token, STRANGER, 777n)
      await writer.setAllowance(state, token, STRANGER, VIEWER, 555n)
      expect(await balanceOf(state, token, STRANGER)).toBe(777n)
      const allowance = await sim.call(state, { from: VIEWER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'allowance', args: [STRANGER, VIEWER] }) })
      expect(BigInt(bytesToHexString(allowance.returnData))).toBe(555n)
      // and the token honours them: the spender can pull the balance
      const pull = await sim.call(state, { from: VIEWER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'transferFrom', args: [STRANGER, VIEWER, 555n] }) })
      expect(pull.status).toBe('success')
    }
  })

  it('writes each holder its own slot when the same token is funded for holders and spenders in turn (the last slot written is kept per token)', async () => {
    const writer = new Erc20StateWriter(sim)
    const token = tokenAddress(registry, 'USDC')
    const state = sim.openState(source.latest())
    const allowance = async (owner: Address, spender: Address) => {
      const r = await sim.call(state, { from: VIEWER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'allowance', args: [owner, spender] }) })
      return BigInt(bytesToHexString(r.returnData))
    }
    // the first write of each kind finds the layout; the next ones reuse or replace the kept slot
    await writer.setBalance(state, token, STRANGER, 1n)
    await writer.setBalance(state, token, VIEWER, 2n)
    await writer.setBalance(state, token, STRANGER, 3n)
    await writer.setAllowance(state, token, STRANGER, VIEWER, 10n)
    await writer.setAllowance(state, token, STRANGER, STRANGER, 20n)
    await writer.setAllowance(state, token, VIEWER, STRANGER, 30n)
    await writer.setAllowance(state, token, STRANGER, VIEWER, 40n)
    // a call freezes the state (it forks it): every write first, then the reads
    expect([await balanceOf(state, token, STRANGER), await balanceOf(state, token, VIEWER)]).toEqual([3n, 2n])
    expect([await allowance(STRANGER, VIEWER), await allowance(STRANGER, STRANGER), await allowance(VIEWER, STRANGER)]).toEqual([40n, 20n, 30n])
  })

  it('works for WETH9 (a different contract, a different layout) and refuses a non-token', async () => {
    const writer = new Erc20StateWriter(sim)
    const state = sim.openState(source.latest())
    await writer.setBalance(state, lower(registry.weth), STRANGER, 42n)
    expect(await balanceOf(state, lower(registry.weth), STRANGER)).toBe(42n)
    await expect(writer.setBalance(sim.openState(source.latest()), lower(registry.v2.router02), STRANGER, 1n)).rejects.toBeInstanceOf(Erc20SlotNotFoundError)
  })
})
