/**
 * ethereum/tests `stQuadraticComplexityTest/QuadraticComplexitySolidity_CallDataCopy` (issue 17):
 * a contract that calls, 50,000 times, a callee copying 50,000 bytes of its 36-byte calldata into
 * memory, run out of gas at 250M. The state-test runner checks its post-state
 * (fixtures/state-tests); here its time is measured beside anvil's on the same transaction, in
 * the same run on the same machine (see RATIO_TO_MINED for what is asserted). The stock
 * interpreter took 48 s: it padded each copy byte by byte through array spreads
 * (memory-patches.ts), and every call frame paid ~70 us of object spreads and journal entries
 * nothing reads (frame-patches.ts); then 0.65 s, of which a fifth was the garbage collector
 * copying whole frames kept young by a getter closure per frame result (frame-patches.ts), the
 * rest async hops, hex strings of addresses (address-patches.ts) and zeroing memory never written
 * (memory-patches.ts). What remains is ~12 us per call (its ~50 opcodes of the caller's loop
 * included; the gas runs out after ~17,000 calls), mostly the ~35 promises of the stock call
 * path (anvil: ~2 us).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTxFromRLP } from '@ethereumjs/tx'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilReceipt, anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { parseGenesis, type GethGenesisJson } from '../../src/chain/memory/genesis.ts'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import { hexToBytesStrict } from '../../src/chain/quantity.ts'
import type { Hex } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { stateTestBlock, type StateTestEnv } from './state-test-block.ts'
import { Simulator } from '../../src/evm/simulator.ts'

const FILE = join(import.meta.dirname, '../../fixtures/state-tests/stQuadraticComplexityTest/QuadraticComplexitySolidity_CallDataCopy.json')

interface QuadraticTest {
  env: StateTestEnv
  pre: GethGenesisJson['alloc']
  transaction: { sender: string }
  post: { Cancun: Array<{ txbytes: Hex; indexes: { gas: number } }> }
}

const test = Object.values(JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, QuadraticTest>)[0]
/** the 250M-gas case (the other gives 150,000 gas) */
const post = test.post.Cancun.find((p) => p.indexes.gas === 1)!
const common = commonForChain(1n, 'cancun')
// the service's gas budget would refuse 250M gas; the wall clock stops a regression that hangs
const simulator = new Simulator({ common, budget: { maxGas: 2n ** 63n, maxMs: 30_000 } })

/**
 * What is asserted. The issue asks for 10x anvil's time, and measured anvil's as its mined
 * transaction (85 ms there). Both sides are measured here in the same run, each the best of
 * RUNS (the best run is the least disturbed by whatever else the two cores are doing):
 * - ours (its CPU time, see below) at most RATIO_TO_MINED x anvil's mined transaction (sent, mined, then the chain put
 *   back with evm_snapshot/evm_revert to send it again);
 * - ours at most RATIO_TO_CALL x anvil's eth_call of it (its execution alone, with no block to
 *   build: the hardest comparison; at 0.65 s this code was at 17-24x, the stock interpreter at
 *   ~1,000x);
 * - and under BOUND_MS, whatever anvil does (a hang or a return of the byte-by-byte copies).
 * On the project machine: ours 0.20-0.23 s, anvil's mined transaction 34-40 ms, its eth_call
 * 27-30 ms (x5.5-6 and x7-8). With both cores busy (two other CPU-bound processes) our wall
 * clock reached 0.6-1.1 s while our CPU time stayed at 0.23 s and anvil slowed to 66 and 52 ms
 * (x3.5 and x4.5), hence the CPU time; the wall clock is held to BOUND_MS.
 */
const RUNS = 7
const RATIO_TO_MINED = 10
const RATIO_TO_CALL = 15
const BOUND_MS = 3_000

async function ours(): Promise<{ ms: number; cpuMs: number; gasUsed: bigint; status: string }> {
  const genesis = parseGenesis({ config: { chainId: 1 }, alloc: test.pre })
  const block = stateTestBlock(test.env)
  const tx = createTxFromRLP(hexToBytesStrict(post.txbytes, 'txbytes'), { common })
  const state = simulator.openState(new MemoryStateReader(genesis.block, genesis.accounts), block)
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const r = await simulator.transaction(state, tx)
  const cpu = process.cpuUsage(c0)
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, gasUsed: r.gasUsed, status: r.status }
}

describe('QuadraticComplexitySolidity_CallDataCopy against anvil', () => {
  let anvil: AnvilInstance
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quadratic-'))
    const genesis = {
      config: {
        chainId: 1, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0,
        istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0, terminalTotalDifficulty: 0, terminalTotalDifficultyPassed: true,
        shanghaiTime: 0, cancunTime: 0,
      },
      alloc: test.pre,
      gasLimit: test.env.currentGasLimit,
      baseFeePerGas: test.env.currentBaseFee,
      difficulty: '0x0',
      timestamp: '0x0',
      coinbase: test.env.currentCoinbase,
    }
    writeFileSync(join(dir, 'genesis.json'), JSON.stringify(genesis))
    anvil = await startAnvil({ genesisPath: join(dir, 'genesis.json'), hardfork: 'cancun', chainId: 1, extraArgs: ['--gas-limit', BigInt(test.env.currentGasLimit).toString()] })
  })
  afterAll(async () => {
    await anvil?.stop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it(`runs out of gas as anvil does, in at most ${RATIO_TO_MINED}x anvil's mined transaction, ${RATIO_TO_CALL}x its eth_call and ${BOUND_MS} ms`, async () => {
    // anvil: the signed transaction sent and mined (its receipt: out of gas, all its gas used),
    // RUNS times from the same state
    const minedMs: number[] = []
    let receipt: { status: string; gasUsed: string } | undefined
    for (let i = 0; i < RUNS; i++) {
      const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
      const m0 = performance.now()
      const hash = await anvilRpc<Hex>(anvil.url, 'eth_sendRawTransaction', [post.txbytes])
      await anvilRpc(anvil.url, 'evm_mine')
      minedMs.push(performance.now() - m0)
      receipt = await anvilReceipt<{ status: string; gasUsed: string }>(anvil.url, hash)
      expect(receipt.status).toBe('0x0')
      expect(await anvilRpc<boolean>(anvil.url, 'evm_revert', [snapshot])).toBe(true)
    }
    // its execution alone, as eth_call on a warm anvil (out of gas: an error answer)
    const tx = createTxFromRLP(hexToBytesStrict(post.txbytes, 'txbytes'), { common })
    const call = { from: test.transaction.sender, to: tx.to!.toString(), data: `0x${Buffer.from(tx.data).toString('hex')}`, gas: `0x${tx.gasLimit.toString(16)}`, value: '0x1' }
    const callMs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      await anvilRpc(anvil.url, 'eth_call', [call, '0x0']).catch(() => undefined)
      callMs.push(performance.now() - t0)
    }

    // ours: the same transaction through the simulator, warm
    await ours()
    const runs: Array<Awaited<ReturnType<typeof ours>>> = []
    for (let i = 0; i < RUNS; i++) runs.push(await ours())
    for (const r of runs) {
      expect(r.status).toBe('halted')
      expect(r.gasUsed).toBe(BigInt(receipt!.gasUsed))
    }
    const ourMs = Math.min(...runs.map((r) => r.ms))
    // the ratios take our CPU time: on busy cores the wall clock of one thread also counts the
    // time it waits for a core (anvil's best run, short and multi-threaded, mostly does not)
    const ourCpuMs = Math.min(...runs.map((r) => r.cpuMs))
    const mined = Math.min(...minedMs)
    const called = Math.min(...callMs)
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join('/')
    console.log(
      `QuadraticComplexitySolidity_CallDataCopy: ours ${list(runs.map((r) => r.ms))} ms (CPU ${list(runs.map((r) => r.cpuMs))} ms); ` +
        `anvil mined ${list(minedMs)} ms (x${(ourCpuMs / mined).toFixed(1)}), eth_call ${list(callMs)} ms (x${(ourCpuMs / called).toFixed(1)}); best against best`,
    )
    expect(ourMs).toBeLessThan(BOUND_MS)
    expect(ourCpuMs / mined).toBeLessThan(RATIO_TO_MINED)
    expect(ourCpuMs / called).toBeLessThan(RATIO_TO_CALL)
  })
})
