/**
 * direct-call.ts runs a call as runTx would: for the same call on the same state, the direct path
 * and runTx (with the zero-price transaction the simulator used to build) give the same execution
 * result, the same receipt gas and the same state changes, account by account and slot by slot
 * (sender nonce and top-up, the coinbase touched, EIP-6780 selfdestructs, EIP-161 cleanup). The
 * fallbacks to runTx write nothing.
 */
import { describe, expect, it } from 'vitest'
import type { Hex } from 'viem'
import { createTx } from '@ethereumjs/tx'
import { createAddressFromString, type Address as EjsAddress } from '@ethereumjs/util'
import { runTx } from '@ethereumjs/vm'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { callIntrinsicGas, runDirectCall, type CallRunResult, type DirectCall } from '../../src/evm/direct-call.ts'
import { applyAccountOverrides, type AccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { GENESIS_PATH, loadFixtureTxs, loadRegistry, lower } from '../support/devnet.ts'

const registry = loadRegistry()
const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const common = commonForChain(source.chainId)
const sim = new Simulator({ common })
const pool = new VmPool(common)

const FACTORY: Address = '0x000000000000000000000000000000000000fac7'
const DOOMED: Address = '0x000000000000000000000000000000000000d00d'
const NOBODY: Address = '0x0000000000000000000000000000000000000b0b'
const COINBASE: Address = '0x0000000000000000000000000000000000000000'
const overrides: AccountOverrides = new Map([
  // PUSH2 0x33ff PUSH1 0 MSTORE, CREATE(value 0, offset 30, size 2): init code CALLER SELFDESTRUCT; STOP
  [FACTORY, { code: '0x6133ff600052600260' + '1e6000f05000' as Hex }],
  // CALLER SELFDESTRUCT: an existing contract, kept under EIP-6780 (its balance goes to the caller)
  [DOOMED, { code: '0x33ff' as Hex, balance: 5n }],
])

interface Outcome {
  gas: bigint
  executionGasUsed: bigint
  returnValue: string
  error?: string
  logs: unknown
  changes: unknown
}

function outcome(result: CallRunResult, changes: unknown): Outcome {
  const exec = result.execResult
  return {
    gas: result.totalGasSpent,
    executionGasUsed: exec.executionGasUsed,
    returnValue: Buffer.from(exec.returnValue).toString('hex'),
    error: exec.exceptionError?.error,
    logs: exec.logs,
    changes,
  }
}

async function run(call: DirectCall, path: 'direct' | 'runTx', extra?: AccountOverrides): Promise<Outcome> {
  const state = sim.openState(source.latest())
  await applyAccountOverrides(state, overrides)
  if (extra !== undefined) await applyAccountOverrides(state, extra)
  const exec = state.fork()
  const block = exec.toEjsCallBlock()
  const result = await pool.with(exec.overlay, async (vm) => {
    if (path === 'direct') {
      const direct = await runDirectCall(vm, block, call)
      if (direct === undefined) throw new Error('the direct path declined the call')
      return direct
    }
    const tx = createTx(
      { type: 2, to: call.to, data: call.data, value: call.value, gasLimit: call.gasLimit, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n },
      { common, freeze: false },
    )
    ;(tx as { getSenderAddress: () => EjsAddress }).getSenderAddress = () => call.caller
    return runTx(vm, { tx, block, skipNonce: true, skipBalance: true, skipHardForkValidation: true })
  })
  return outcome(result, exec.overlay.diff())
}

function call(from: Address, to: Address, data: Uint8Array | Hex = '0x', value = 0n, gasLimit = 1_000_000n): DirectCall {
  return {
    caller: createAddressFromString(from),
    to: createAddressFromString(to),
    data: typeof data === 'string' ? Buffer.from(data.slice(2), 'hex') : data,
    value,
    gasLimit,
  }
}

const fixtureCalls = loadFixtureTxs().map((fx) => {
  const { tx } = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common })
  return { name: fx.name, call: call(lower(fx.from), lower(tx.to!.toString()), tx.data, tx.value, tx.gasLimit) }
})

const cases: Array<{ name: string; call: DirectCall; extra?: AccountOverrides }> = [
  ...fixtureCalls,
  { name: 'value from an account that does not exist (topped up)', call: call(NOBODY, '0x000000000000000000000000000000000000f00d', '0x', 10n ** 18n) },
  { name: 'a contract created and destroyed in the call (EIP-6780: deleted)', call: call(NOBODY, FACTORY) },
  { name: 'an existing contract selfdestructs (EIP-6780: kept, balance moved)', call: call(NOBODY, DOOMED) },
  { name: 'an empty coinbase account is removed (EIP-161)', call: call(NOBODY, DOOMED), extra: new Map([[COINBASE, { balance: 0n, nonce: 0n }]]) },
  { name: 'out of gas', call: call(NOBODY, FACTORY, '0x', 0n, 30_000n) },
  { name: 'calldata below the EIP-7623 floor', call: call(NOBODY, '0x000000000000000000000000000000000000f00d', `0x${'ff'.repeat(300)}`) },
]

describe('direct call path', () => {
  it.each(cases)('$name: same result, gas and state changes as runTx', async ({ call: c, extra }) => {
    const direct = await run(c, 'direct', extra)
    const stock = await run(c, 'runTx', extra)
    expect(direct).toEqual(stock)
  })

  it('computes intrinsic gas and the calldata floor as the transaction library does', () => {
    for (const data of ['0x', '0x00', '0xff', `0x${'00ff'.repeat(100)}`, `0x${'00'.repeat(33)}`] as Hex[]) {
      const bytes = Buffer.from(data.slice(2), 'hex')
      const tx = createTx({ type: 2, to: NOBODY, data: bytes, gasLimit: 10n ** 6n }, { common })
      const { intrinsic, floor } = callIntrinsicGas(common, bytes)
      expect(intrinsic).toBe(tx.getIntrinsicGas())
      expect(floor).toBe(21_000n + 10n * BigInt([...bytes].reduce((n, b) => n + (b === 0 ? 1 : 4), 0)))
    }
  })

  it('leaves to runTx, having written nothing, what it does not implement', async () => {
    const state = sim.openState(source.latest())
    await applyAccountOverrides(state, overrides)
    const exec = state.fork()
    const block = exec.toEjsCallBlock()
    const declined = await pool.with(exec.overlay, async (vm) => [
      // a sender with code (EIP-3607 makes runTx reject it)
      await runDirectCall(vm, block, call(FACTORY, NOBODY)),
      // a gas limit below the intrinsic gas, above the block's
      await runDirectCall(vm, block, call(NOBODY, FACTORY, '0x', 0n, 20_000n)),
      await runDirectCall(vm, block, call(NOBODY, FACTORY, '0x', 0n, block.header.gasLimit + 1n)),
    ])
    expect(declined).toEqual([undefined, undefined, undefined])
    expect(exec.overlay.writeCount).toBe(0)
    expect(await exec.overlay.getAccount(createAddressFromString(NOBODY))).toBeUndefined()
  })
})
