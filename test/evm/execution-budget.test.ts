/**
 * The execution budget (src/evm/execution-budget.ts): every execution of the Simulator has a gas cap
 * and a wall-clock budget, checked by the interpreter itself, per execution.
 * - code that loops (a tight jump loop, a loop of precompile calls, a contract calling itself in a
 *   call tree) is stopped past EVM_MAX_MS with an ExecutionBudgetError naming it, promptly;
 * - an ordinary call running at the same moment is answered; two executions keep their own
 *   deadlines; the VM of a stopped execution is discarded and the next execution runs normally;
 * - a call given more gas than EVM_MAX_GAS is capped, and is answered as the budget when it then
 *   runs out; a signed transaction whose gas limit exceeds it is not executed;
 * - EVM_MAX_GAS and EVM_MAX_MS are read by loadConfig with defaults and bounds.
 */
import { describe, expect, it } from 'vitest'
import { encodeFunctionData, parseAbi, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createAddressFromString } from '@ethereumjs/util'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import { ConfigError } from '../../src/config.ts'
import { nextBlockContext } from '../../src/evm/block-context.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { DEFAULT_EXECUTION_BUDGET, ExecutionBudgetError, type ExecutionBudget } from '../../src/evm/execution-budget.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator, TransactionRejectedError, type SimulationState } from '../../src/evm/simulator.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'
import { loadConfig } from '../../src/node/config.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { GENESIS_PATH, loadRegistry, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const common = commonForChain(source.chainId)
const CALLER: Address = '0x000000000000000000000000000000000000c0de'

/** JUMPDEST PUSH1 0 JUMP: 12 gas an iteration, nothing else */
const TIGHT_LOOP = '0x5b600056'
/** JUMPDEST, STATICCALL(gas, identity precompile, 0, 0, 0, 0), POP, PUSH1 0 JUMP: a call frame an iteration */
const PRECOMPILE_LOOP = '0x5b' + '6000600060006000' + '60045afa' + '50' + '600056'
/** JUMPDEST, CALL(gas, ADDRESS, 0, 0, 0, 0, 0), POP, PUSH1 0 JUMP: calls itself, each callee the same, until the gas runs out */
const SELF_CALLS = '0x5b' + '60006000600060006000' + '305af1' + '50' + '600056'

const LOOPS: Record<string, { address: Address; code: string }> = {
  'a tight jump loop': { address: '0x0000000000000000000000000000000000100001', code: TIGHT_LOOP },
  'a loop of precompile calls': { address: '0x0000000000000000000000000000000000100002', code: PRECOMPILE_LOOP },
  'a contract calling itself (a call tree of short frames)': { address: '0x0000000000000000000000000000000000100003', code: SELF_CALLS },
}

/** A state in a next block with a large gas limit (so that running out of gas takes seconds), the loops deployed. */
async function loopState(sim: Simulator, gasLimit = 2_000_000_000n): Promise<SimulationState> {
  const head = source.latest()
  const state = sim.openState(head, { ...nextBlockContext(head.block, 12n), gasLimit })
  await applyAccountOverrides(state, new Map(Object.values(LOOPS).map((l) => [l.address, { code: l.code as Hex }])))
  return state
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const t0 = performance.now()
  try {
    const value = await work()
    return { ms: performance.now() - t0, value }
  } catch (error) {
    return { ms: performance.now() - t0, error }
  }
}

const BALANCE_OF = parseAbi(['function balanceOf(address) view returns (uint256)'])
const balanceOfCall = (holder: Address) => ({
  from: CALLER,
  to: tokenAddress(registry, 'USDC'),
  data: encodeFunctionData({ abi: BALANCE_OF, functionName: 'balanceOf', args: [holder] }),
})

describe('wall-clock budget', () => {
  const budget: ExecutionBudget = { maxGas: 2_000_000_000n, maxMs: 150 }
  const sim = new Simulator({ common, budget })

  it.each(Object.entries(LOOPS))('stops %s past EVM_MAX_MS, naming it', async (_name, loop) => {
    const state = await loopState(sim)
    await sim.call(state, balanceOfCall(CALLER)) // a VM ready, as in a running service
    const r = await timed(() => sim.call(state, { from: CALLER, to: loop.address }))
    expect(r.error).toBeInstanceOf(ExecutionBudgetError)
    const err = r.error as ExecutionBudgetError
    expect(err.kind).toBe('time')
    expect(err.limit).toBe(150)
    expect(err.message).toMatch(/wall-clock budget of 150 ms per EVM execution \(EVM_MAX_MS\)/)
    expect(r.ms).toBeGreaterThanOrEqual(150)
    // stopped at the first check past the deadline: far from the seconds running out of gas takes
    expect(r.ms).toBeLessThan(150 + 350)
  })

  it('answers an ordinary call started at the same moment; each execution keeps its own deadline', async () => {
    const state = await loopState(sim)
    const late = new Simulator({ common, budget: { ...budget, maxMs: 400 } })
    const [a, b, ordinary] = await Promise.all([
      timed(() => sim.call(state, { from: CALLER, to: LOOPS['a loop of precompile calls'].address })),
      timed(() => late.call(state, { from: CALLER, to: LOOPS['a loop of precompile calls'].address })),
      timed(() => sim.call(state, balanceOfCall(CALLER))),
    ])
    expect(ordinary.error).toBeUndefined()
    expect(ordinary.value?.status).toBe('success')
    expect((a.error as ExecutionBudgetError).limit).toBe(150)
    expect((b.error as ExecutionBudgetError).limit).toBe(400)
    // the two loops share the event loop, yet each is stopped by its own deadline
    expect(a.ms).toBeLessThan(400)
    expect(b.ms).toBeGreaterThanOrEqual(400)
  })

  it('discards the VM of a stopped execution; the next execution on the pool runs normally', async () => {
    const pool = new VmPool(common)
    const state = JournaledState.over(EMPTY_STATE_READER)
    const loop = createAddressFromString(LOOPS['a tight jump loop'].address)
    await state.putCode(loop, Buffer.from(TIGHT_LOOP.slice(2), 'hex'))
    const run = (gasLimit: bigint, maxMs?: number) => pool.with(state, (vm) => vm.evm.runCall({ to: loop, gasLimit }), maxMs === undefined ? undefined : { maxMs })
    await expect(run(10n ** 12n, 50)).rejects.toBeInstanceOf(ExecutionBudgetError)
    expect(pool.stats()).toMatchObject({ created: 1, discarded: 1, live: 0 })
    // without a deadline the pool's VM runs the loop to its own out of gas
    const halted = (await run(100_000n)) as { execResult: { exceptionError?: { error: string }; executionGasUsed: bigint } }
    expect(halted.execResult.exceptionError?.error).toBe('out of gas')
    expect(halted.execResult.executionGasUsed).toBe(100_000n)
  })
})

describe('gas budget', () => {
  const sim = new Simulator({ common, budget: { maxGas: 1_000_000n, maxMs: 10_000 } })

  it('caps a call at EVM_MAX_GAS; one that then runs out of gas is answered as the budget', async () => {
    const state = await loopState(sim)
    const r = await timed(() => sim.call(state, { from: CALLER, to: LOOPS['a tight jump loop'].address }))
    expect(r.error).toBeInstanceOf(ExecutionBudgetError)
    expect((r.error as ExecutionBudgetError).kind).toBe('gas')
    expect((r.error as Error).message).toMatch(/gas budget of 1000000 per EVM execution \(EVM_MAX_GAS\)/)
  })

  it('leaves a call within the cap as it is: its own out of gas is its answer', async () => {
    const state = await loopState(sim)
    const r = await sim.call(state, { from: CALLER, to: LOOPS['a tight jump loop'].address, gasLimit: 500_000n })
    expect(r.status).toBe('halted')
    expect(r.error).toBe('out of gas')
    expect(r.gasUsed).toBe(500_000n)
  })

  async function signed(index: number, fields: { to: Address; gas: bigint; maxFeePerGas?: bigint; value?: bigint }) {
    const account = registry.devAccounts.accounts[index]
    const nonce = (await source.latest().getAccount(account.address.toLowerCase() as Address))?.nonce ?? 0n
    const raw = await privateKeyToAccount(account.privateKey).signTransaction({
      chainId: registry.chainId,
      nonce: Number(nonce),
      to: fields.to,
      gas: fields.gas,
      value: fields.value ?? 0n,
      maxFeePerGas: fields.maxFeePerGas ?? 100n * 10n ** 9n,
      maxPriorityFeePerGas: 0n,
      type: 'eip1559',
    })
    return decodeSignedTransaction(raw, { chainId: BigInt(registry.chainId), common: sim.common }).tx
  }

  it('stops a signed transaction whose gas limit exceeds EVM_MAX_GAS before it runs code (in a bundle: named by its index)', async () => {
    const tx = await signed(20, { to: LOOPS['a tight jump loop'].address, gas: 2_000_000n })
    const state = await loopState(sim, 30_000_000n)
    const r = await timed(() => sim.transaction(state, tx))
    expect(r.error).toBeInstanceOf(ExecutionBudgetError)
    expect((r.error as Error).message).toMatch(/^gas limit 2000000 exceeds the gas budget of 1000000 per EVM execution \(EVM_MAX_GAS\); stopped before its first call frame$/)
    await expect(sim.bundle(state, [tx])).rejects.toThrow(/^transaction 0: gas limit 2000000 exceeds/)
  })

  it('rejects such a transaction that could not be included anyway as the rejection it is, and runs a plain transfer', async () => {
    const broke = await signed(21, { to: LOOPS['a tight jump loop'].address, gas: 2_000_000n, maxFeePerGas: 10n ** 30n })
    const state = await loopState(sim, 30_000_000n)
    await expect(sim.transaction(state, broke)).rejects.toBeInstanceOf(TransactionRejectedError)
    // no call frame: its intrinsic gas, as any transfer
    const transfer = await signed(22, { to: '0x000000000000000000000000000000000000beef', gas: 2_000_000n, value: 1n })
    const r = await sim.transaction(state, transfer)
    expect(r.status).toBe('success')
    expect(r.gasUsed).toBe(21_000n)
  })
})

describe('EVM_MAX_GAS and EVM_MAX_MS', () => {
  const problems = (env: Record<string, string>): string => {
    try {
      loadConfig(env)
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.join('\n')
      throw err
    }
    return ''
  }

  it('default to the Simulator defaults, and are read as given', () => {
    expect(loadConfig({}).evm).toEqual({ maxGas: DEFAULT_EXECUTION_BUDGET.maxGas, maxMs: DEFAULT_EXECUTION_BUDGET.maxMs })
    expect(loadConfig({ EVM_MAX_GAS: '30000000', EVM_MAX_MS: '250' }).evm).toEqual({ maxGas: 30_000_000n, maxMs: 250 })
    expect(new Simulator({ common }).budget).toEqual(DEFAULT_EXECUTION_BUDGET)
  })

  it('are refused out of their bounds, each named', () => {
    expect(problems({ EVM_MAX_GAS: '999999' })).toMatch(/EVM_MAX_GAS=999999: expected a whole number from 1000000 to 10000000000/)
    expect(problems({ EVM_MAX_GAS: '1e7' })).toMatch(/EVM_MAX_GAS="1e7"/)
    expect(problems({ EVM_MAX_MS: '5' })).toMatch(/EVM_MAX_MS=5: expected a whole number from 10 to 600000/)
    expect(problems({ EVM_MAX_MS: '600001' })).toMatch(/EVM_MAX_MS=600001/)
  })

  it('a Simulator refuses a budget that cannot work', () => {
    expect(() => new Simulator({ common, budget: { maxGas: 20_000n, maxMs: 100 } })).toThrow(RangeError)
    expect(() => new Simulator({ common, budget: { maxGas: 1_000_000n, maxMs: 0 } })).toThrow(RangeError)
  })
})
