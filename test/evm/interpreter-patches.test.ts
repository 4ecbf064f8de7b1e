/**
 * interpreter-patches.ts: a step that cannot suspend never yields. A pure-compute loop of 7,000
 * opcodes must run in a handful of microtask turns (the stock interpreter takes at least one per
 * opcode), with the gas the yellow paper gives it. Gas and results of real contracts are checked
 * against anvil and geth by the differential tests.
 */
import { describe, expect, it } from 'vitest'
import type { Hex } from 'viem'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { GENESIS_PATH } from '../support/devnet.ts'

// PUSH2 1000, loop: JUMPDEST PUSH1 1 SWAP1 SUB DUP1 PUSH1 3 JUMPI, STOP
const COUNTDOWN = '0x6103e85b6001900380600357' + '00'
const ITERATIONS = 1000
const STEPS = ITERATIONS * 7

/** Counts microtask turns taken by other work while `work` runs. */
async function microtaskTurns<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0
  let running = true
  const tick = () => {
    if (!running) return
    turns++
    queueMicrotask(tick)
  }
  queueMicrotask(tick)
  try {
    return { result: await work(), turns }
  } finally {
    running = false
  }
}

describe('interpreter patches', () => {
  it('runs opcodes that cannot suspend without yielding, with the same gas', async () => {
    const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    const loop: Address = '0x0000000000000000000000000000000000001007'
    const state = sim.openState(source.latest())
    await applyAccountOverrides(state, new Map([[loop, { code: COUNTDOWN as Hex }]]))
    const caller: Address = '0x000000000000000000000000000000000000c0de'
    await sim.call(state, { from: caller, to: loop }) // warm: VM created, code analysed
    const { result, turns } = await microtaskTurns(() => sim.call(state, { from: caller, to: loop }))
    expect(result.status).toBe('success')
    // intrinsic 21,000 + PUSH2 3 + per iteration JUMPDEST 1, PUSH1 3, SWAP1 3, SUB 3, DUP1 3, PUSH1 3, JUMPI 10
    expect(result.gasUsed).toBe(21_000n + 3n + BigInt(ITERATIONS) * 26n)
    expect(turns).toBeLessThan(STEPS / 20)
  })
})
