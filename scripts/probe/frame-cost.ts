/**
 * CPU per call frame of the pooled EVM: a contract that STATICCALLs, in a loop, a contract that
 * returns one word (the shape of most of a quote's ~24.5 frames: a view call into a token or a
 * pool, its frame setup and teardown around few steps). Prints process CPU us per call (the loop's
 * own ~10 steps included) per round, then one JSON line.
 *
 *   PROBE_CALLS=2000 PROBE_ROUNDS=15 npx tsx scripts/probe/frame-cost.ts
 */
import { Account, createAddressFromString } from '@ethereumjs/util'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { applyInterpreterPatches } from '../../src/evm/interpreter-patches.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const CALLS = Number(process.env.PROBE_CALLS ?? 2000)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 15)
const PASSES = Number(process.env.PROBE_PASSES ?? 10)

await applyInterpreterPatches()
const common = commonForChain(31337n)
const CALLER = createAddressFromString('0x000000000000000000000000000000000000c0de')
const LOOP = createAddressFromString('0x00000000000000000000000000000000000000aa')
const VIEW = createAddressFromString('0x00000000000000000000000000000000000000bb')
// PUSH2 calls; JUMPDEST; STATICCALL(gas, VIEW, 0, 0, 0, 32); POP; counter - 1; JUMPI back while non-zero; STOP
const loop =
  '61' + CALLS.toString(16).padStart(4, '0') + '5b' + '6020600060006000' + '73' + VIEW.toString().slice(2) + '5afa50' + '60019003' + '80600357' + '00'
// JUMP to the next byte (Solidity's code always jumps: the analysis the pooled EVM runs frames with is made at a frame's first jump); MSTORE(0, 0xabcdef); RETURN(0, 32)
const view = '6003565b' + '62abcdef60005260206000f3'

const state = JournaledState.over(EMPTY_STATE_READER)
await state.putCode(LOOP, Buffer.from(loop, 'hex'))
await state.putCode(VIEW, Buffer.from(view, 'hex'))
await state.putAccount(CALLER, new Account(0n, 0n))

const pool = new VmPool(common)
const rounds: number[] = []
await pool.with(state, async (vm) => {
  const once = async () => {
    await vm.evm.journal.checkpoint()
    const r = await vm.evm.runCall({ caller: CALLER, to: LOOP, gasLimit: 30_000_000n })
    await vm.evm.journal.revert()
    if (r.execResult.exceptionError !== undefined) throw new Error(`loop failed: ${r.execResult.exceptionError.error}`)
  }
  for (let i = 0; i < 5; i++) await once()
  for (let round = 0; round < ROUNDS; round++) {
    const from = process.cpuUsage()
    for (let i = 0; i < PASSES; i++) await once()
    const d = process.cpuUsage(from)
    rounds.push(Math.round(((d.user + d.system) / (PASSES * CALLS)) * 1000) / 1000)
  }
})
const sorted = [...rounds].sort((a, b) => a - b)
console.log(`us per call, by round: ${rounds.join(' ')}`)
console.log(JSON.stringify({ name: 'frame-cost', calls: CALLS, rounds: ROUNDS, min_us_per_call: sorted[0], median_us_per_call: sorted[sorted.length >> 1] }))
