/**
 * Every signed fixture transaction, simulated in-process, gives exactly what anvil (an independent
 * EVM) recorded: status, gasUsed, logs and balance changes. Once on the embedded devnet state, once
 * on a fork whose upstream is anvil loaded with the same genesis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { ForkStateSource } from '../../src/chain/fork/index.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address, StateReader } from '../../src/chain/types.ts'
import { nextBlockContext } from '../../src/evm/block-context.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator, type SimulationState } from '../../src/evm/simulator.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { expectFixtureOutcome } from './fixture-outcome.ts'
import { GENESIS_PATH, loadFixtureTxs, loadRegistry, lower, tokenAddress, type FixtureTx } from '../support/devnet.ts'

const registry = loadRegistry()
const fixtures = loadFixtureTxs()
const BALANCE_OF = parseAbi(['function balanceOf(address) view returns (uint256)'])
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'

async function balances(sim: Simulator, state: SimulationState, holder: Address, symbols: string[]): Promise<Record<string, bigint>> {
  const out: Record<string, bigint> = {}
  for (const symbol of symbols) {
    if (symbol === 'ETH') {
      out.ETH = (await state.overlay.readAccount(holder))?.balance ?? 0n
      continue
    }
    const r = await sim.call(state, {
      from: VIEWER,
      to: tokenAddress(registry, symbol),
      data: encodeFunctionData({ abi: BALANCE_OF, functionName: 'balanceOf', args: [holder] }),
    })
    out[symbol] = decodeFunctionResult({ abi: BALANCE_OF, functionName: 'balanceOf', data: bytesToHexString(r.returnData) })
  }
  return out
}

async function checkAgainstAnvil(sim: Simulator, reader: StateReader, fx: FixtureTx) {
  const ctx = nextBlockContext(reader.block, 12n)
  // our next-block context is the block anvil mined the transaction in
  expect(ctx.number).toBe(BigInt(fx.block.number))
  expect(ctx.timestamp).toBe(BigInt(fx.block.timestamp))
  expect(ctx.baseFeePerGas).toBe(BigInt(fx.block.baseFeePerGas))
  expect(ctx.gasLimit).toBe(BigInt(fx.block.gasLimit))
  expect(ctx.coinbase).toBe(lower(fx.block.miner))
  const base = sim.openState(reader, { ...ctx, prevRandao: fx.block.mixHash })
  const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: sim.common })
  expect(tx.hash).toBe(fx.hash)
  const result = await sim.transaction(base, tx.tx)

  expectFixtureOutcome(result, fx)
  for (const change of fx.expected.balanceChanges) {
    const holder = lower(change.address)
    const symbols = Object.keys(change.deltas)
    const before = await balances(sim, base, holder, symbols)
    const after = await balances(sim, result.state, holder, symbols)
    for (const symbol of symbols) {
      expect(`${change.label} ${symbol} ${after[symbol] - before[symbol]}`).toBe(`${change.label} ${symbol} ${change.deltas[symbol]}`)
    }
  }
}

describe('simulator vs anvil on the embedded devnet', () => {
  const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
  const sim = new Simulator({ common: commonForChain(source.chainId) })
  it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, fx) => {
    await checkAgainstAnvil(sim, source.latest(), fx)
  })
})

describe('simulator vs anvil in fork mode (anvil as the upstream)', () => {
  let anvil: AnvilInstance
  let source: ForkStateSource
  let sim: Simulator
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    source = await ForkStateSource.create({ url: anvil.url, blockNumber: 0n })
    sim = new Simulator({ common: commonForChain(source.chainId) })
  })
  afterAll(async () => {
    await source?.close()
    await anvil?.stop()
  })
  it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, fx) => {
    await checkAgainstAnvil(sim, source.latest(), fx)
  })
})
