/**
 * Calls (`Simulator.call`, the path that runs the EVM without runTx) give what anvil gives the same
 * message as a mined transaction: status, receipt gasUsed, return data, logs, and the state after.
 *
 * Once against every fixture transaction anvil recorded (each replayed as a call from its sender in
 * its block; the two that carry an access list are left out, a call has none), once against a live anvil for what the fixtures do not reach: the EIP-7623 calldata
 * floor, the EIP-2929/3651 warm set (precompiles, caller, target, coinbase), a value transfer to a
 * new account, an out-of-gas halt, and a refund capped by EIP-3529.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem'
import { anvilReceipt, anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { nextBlockContext } from '../../src/evm/block-context.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator, type CallRequest, type SimulationState } from '../../src/evm/simulator.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { expectFixtureOutcome } from './fixture-outcome.ts'
import { GENESIS_PATH, loadFixtureTxs, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const fixtures = loadFixtureTxs()
const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const sim = new Simulator({ common: commonForChain(source.chainId) })
const BALANCE_OF = parseAbi(['function balanceOf(address) view returns (uint256)'])
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'

async function tokenBalance(state: SimulationState, symbol: string, holder: Address): Promise<bigint> {
  const r = await sim.call(state, { from: VIEWER, to: tokenAddress(registry, symbol), data: encodeFunctionData({ abi: BALANCE_OF, functionName: 'balanceOf', args: [holder] }) })
  return decodeFunctionResult({ abi: BALANCE_OF, functionName: 'balanceOf', data: bytesToHexString(r.returnData) })
}

const decode = (raw: Hex) => decodeSignedTransaction(raw, { chainId: BigInt(registry.chainId), common: sim.common }).tx
/** A call has no access list: transactions that carry one (warm slots, their own intrinsic gas) are left out. */
const withoutAccessList = fixtures.filter((f) => {
  const tx = decode(f.raw)
  return !('accessList' in tx) || tx.accessList.length === 0
})

describe('calls vs anvil: every fixture transaction replayed as a call', () => {
  it('covers the fixtures', () => {
    expect(withoutAccessList.length).toBeGreaterThanOrEqual(20)
  })
  it.each(withoutAccessList.map((f) => [f.name, f] as const))('%s', async (_name, fx) => {
    const ctx = nextBlockContext(source.latest().block, 12n)
    const base = sim.openState(source.latest(), { ...ctx, prevRandao: fx.block.mixHash })
    const tx = decode(fx.raw)
    const request: CallRequest = {
      from: lower(fx.from),
      to: tx.to === undefined ? undefined : lower(tx.to.toString()),
      data: tx.data,
      value: tx.value,
      gasLimit: tx.gasLimit,
    }
    const result = await sim.call(base, request)
    expectFixtureOutcome(result, fx)
    // token balances after the call moved as anvil's (ETH differs by the fee a call does not pay)
    for (const change of fx.expected.balanceChanges) {
      const holder = lower(change.address)
      for (const [symbol, delta] of Object.entries(change.deltas)) {
        if (symbol === 'ETH') continue
        const moved = (await tokenBalance(result.state, symbol, holder)) - (await tokenBalance(base, symbol, holder))
        expect(`${change.label} ${symbol} ${moved}`).toBe(`${change.label} ${symbol} ${delta}`)
      }
    }
  })
})

describe('calls vs anvil: gas rules the fixtures do not reach (live anvil)', () => {
  const dev = lower(registry.devAccounts.accounts[1].address)
  // COINBASE BALANCE POP, CALLER BALANCE POP, ADDRESS BALANCE POP, PUSH1 1 BALANCE POP (ecrecover), STOP:
  // every BALANCE is warm (100 gas) only with the EIP-2929/3651 warm set
  const WARM_PROBE = '0x413150333150303150600131' + '5000'
  const PROBE: Address = '0x000000000000000000000000000000000000beef'
  // PUSH1 0 PUSH1 0 SSTORE, PUSH1 0 PUSH1 1 SSTORE, STOP: slots 0 and 1 (both 1) cleared, a refund of
  // 9,600 against 31,012 gas used: the EIP-3529 cap (a fifth, 6,202) binds
  const CLEARER: Address = '0x000000000000000000000000000000000000c1ea'
  const CLEAR_SLOTS = '0x6000600055600060015500'
  let anvil: AnvilInstance

  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    await anvilRpc(anvil.url, 'anvil_setCode', [PROBE, WARM_PROBE])
    await anvilRpc(anvil.url, 'anvil_setCode', [CLEARER, CLEAR_SLOTS])
    for (const slot of ['0', '1']) await anvilRpc(anvil.url, 'anvil_setStorageAt', [CLEARER, `0x${slot.padStart(64, '0')}`, `0x${'1'.padStart(64, '0')}`])
    await anvilRpc(anvil.url, 'anvil_autoImpersonateAccount', [true])
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  /** The receipt of `request` mined by anvil in the block our calls execute in, then undone. */
  async function anvilGas(request: CallRequest): Promise<{ gasUsed: bigint; status: number }> {
    const ctx = nextBlockContext(source.latest().block, sim.blockTimeSeconds)
    // anvil's head after the setup writes is still the genesis block: the next block is ours
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    try {
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(ctx.timestamp)])
      const hash = await anvilRpc<Hex>(anvil.url, 'eth_sendTransaction', [
        {
          from: request.from,
          to: request.to,
          data: request.data instanceof Uint8Array ? bytesToHexString(request.data) : request.data,
          value: `0x${(request.value ?? 0n).toString(16)}`,
          gas: `0x${(request.gasLimit ?? 1_000_000n).toString(16)}`,
          maxFeePerGas: '0x2540be400',
          maxPriorityFeePerGas: '0x0',
        },
      ])
      await anvilRpc(anvil.url, 'evm_mine')
      const receipt = await anvilReceipt<{ gasUsed: Hex; status: Hex; blockNumber: Hex }>(anvil.url, hash)
      expect(BigInt(receipt.blockNumber)).toBe(ctx.number)
      return { gasUsed: BigInt(receipt.gasUsed), status: Number(receipt.status) }
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  }

  async function ours(request: CallRequest) {
    const state = sim.openState(source.latest())
    await applyAccountOverrides(state, new Map([
      [PROBE, { code: WARM_PROBE as Hex }],
      [CLEARER, { code: CLEAR_SLOTS as Hex, storage: new Map([[0n, 1n], [1n, 1n]]) }],
    ]))
    return sim.call(state, request)
  }

  const cases: Array<[string, CallRequest]> = [
    // 21,000 + 16 * 200 = 24,200 intrinsic; the EIP-7623 floor 21,000 + 10 * 4 * 200 = 29,000 applies
    ['calldata to an account without code: the EIP-7623 floor', { from: dev, to: '0x00000000000000000000000000000000000ca11d', data: `0x${'ab'.repeat(200)}`, gasLimit: 100_000n }],
    ['BALANCE of coinbase, caller, target and a precompile: all warm', { from: dev, to: PROBE, gasLimit: 100_000n }],
    ['value to a new account', { from: dev, to: '0x000000000000000000000000000000000000f00d', value: 10n ** 15n, gasLimit: 100_000n }],
    ['a swap with too little gas: out of gas, all of it used', {
      from: lower(fixtures.find((f) => f.name === 'v3-exactInputSingle-small')!.from),
      to: lower(registry.v3.swapRouter),
      data: decode(fixtures.find((f) => f.name === 'v3-exactInputSingle-small')!.raw).data,
      gasLimit: 60_000n,
    }],
    ['a storage clear: the refund capped at a fifth of the gas used', { from: dev, to: CLEARER, gasLimit: 100_000n }],
  ]

  it.each(cases)('%s', async (_name, request) => {
    const expected = await anvilGas(request)
    const result = await ours(request)
    expect({ gasUsed: result.gasUsed, status: result.status === 'success' ? 1 : 0 }).toEqual(expected)
  })
})
