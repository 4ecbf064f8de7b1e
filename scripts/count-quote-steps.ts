/**
 * Where the EVM steps of a quote are: runs the bench:quote mix (test/support/quote-mix.ts) through
 * the quote service in-process (`WORKERS=0`), captures every execution of the router calldata,
 * executes each again in a VM of its own with step and message listeners, and prints, per mix
 * request and in all, the steps and the gas spent inside each contract (exclusive of the frames it
 * calls), labelled from the devnet registry (router, tokens, V2 pairs, V3 pools, V4 PoolManager,
 * hooks). The listeners put that VM on ethereumjs' stock step path, so its timing means nothing;
 * its steps and gas are the executions' own (checked: the gas equals the captured execution's).
 *
 *   npx tsx scripts/count-quote-steps.ts            # table, then one JSON line
 *   COUNT_TIME=1 npx tsx scripts/count-quote-steps.ts
 *
 * With COUNT_TIME=1 it also times the captured executions on the simulator's own (fast) path, in
 * process CPU, for every venue of the registry and for Uniswap's V2 and V3 alone (`VENUES`, as
 * bench:quote's venues step): COUNT_ROUNDS (default 5) rounds of COUNT_MIXES (default 40) passes
 * over the mix's executions, after COUNT_WARMUP (default 20) passes; per round the EVM CPU ms per
 * quote (the mix's executions' CPU over its requests) and ns per step (over the counted steps).
 * The minimum round is the figure least moved by other load on the machine.
 */
import type { Common } from '@ethereumjs/common'
import { createVM } from '@ethereumjs/vm'
import { createAddressFromString } from '@ethereumjs/util'
import type { EVMResult } from '@ethereumjs/evm'
import { hexToBytesStrict } from '../src/chain/quantity.ts'
import type { Address } from '../src/chain/types.ts'
import { runDirectCall } from '../src/evm/direct-call.ts'
import { INLINE_OPCODES, INLINE_OWN_HANDLER_OPCODES, MEMORY_GROWTH_BYTES_MAX } from '../src/evm/inline-steps.ts'
import type { CallRequest, SimulationState } from '../src/evm/simulator.ts'
import { loadConfig } from '../src/node/config.ts'
import { openDomainServices } from '../src/node/domain.ts'
import { QUOTE_MIX } from '../test/support/quote-mix.ts'
import { loadRegistry } from '../test/support/devnet.ts'
import { readFileSync } from 'node:fs'

interface Tally {
  steps: number
  /** of which opcodes the interpreter loop runs inline (src/evm/inline-steps.ts): the cheap ones */
  inline: number
  gas: bigint
}

const INLINE = new Set(INLINE_OPCODES)
/**
 * MLOAD and MSTORE run inline inside paid memory and where they grow it below
 * MEMORY_GROWTH_BYTES_MAX (with the gas for it); CALLDATALOAD (almost always a whole word) is
 * counted inline
 */
const INLINE_OWN = new Set(INLINE_OWN_HANDLER_OPCODES)

interface StepEvent {
  codeAddress: { toString(): string }
  opcode: { code: number; name: string }
  stack: bigint[]
}

/** whether the interpreter loop runs this step in its inline batch (src/evm/inline-steps.ts) */
function inlined(e: StepEvent): boolean {
  const op = e.opcode.code
  if (INLINE.has(op)) return true
  if (!INLINE_OWN.has(op)) return false
  if (op === 0x35) return true
  const offset = e.stack[e.stack.length - 1]
  return offset !== undefined && offset + 32n <= BigInt(MEMORY_GROWTH_BYTES_MAX)
}

/** the mix's steps the interpreter loop does not inline, by opcode name, and its call frames */
const notInlined = new Map<string, number>()
let frameCount = 0

/**
 * address (lower case) -> a label naming what the devnet registry says it is: objects with an
 * `address` first ("tokens WETH", "v3.pools USDC/WETH 0.05%"), then other address fields by their
 * key path ("venues.poolManager"); token0/token1 and currency fields name tokens already labelled.
 */
function registryLabels(router: Address): Map<string, string> {
  const labels = new Map<string, string>([[router.toLowerCase(), 'SwapPlanRouter']])
  const registry: unknown = loadRegistry()
  const walk = (value: unknown, path: string, objects: boolean): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v, path, objects)
      return
    }
    if (value === null || typeof value !== 'object') return
    const o = value as Record<string, unknown>
    if (objects && typeof o.address === 'string' && !labels.has(o.address.toLowerCase())) {
      const name = typeof o.symbol === 'string' ? o.symbol : typeof o.name === 'string' ? o.name : ''
      labels.set(o.address.toLowerCase(), `${path} ${name}`.trim())
    }
    for (const [k, v] of Object.entries(o)) {
      const at = path === '' ? k : `${path}.${k}`
      if (!objects && typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v) && !labels.has(v.toLowerCase())) labels.set(v.toLowerCase(), at)
      if (typeof v === 'object') walk(v, at, objects)
    }
  }
  walk(registry, '', true)
  walk(registry, '', false)
  return labels
}

/** Runs `request` on a fork of `state` in a VM with listeners; steps and exclusive gas per code address. */
async function countSteps(common: Common, state: SimulationState, request: CallRequest) {
  const forked = state.fork()
  const vm = await createVM({ common, stateManager: forked.overlay })
  const per = new Map<string, Tally>()
  // one entry per open frame: its code address and the gas its children used
  const frames: { code: string; childGas: bigint }[] = []
  vm.evm.events!.on('step', (e: StepEvent, resolve?: () => void) => {
    const code = e.codeAddress.toString()
    const t = per.get(code) ?? { steps: 0, inline: 0, gas: 0n }
    t.steps++
    if (inlined(e)) t.inline++
    else notInlined.set(e.opcode.name, (notInlined.get(e.opcode.name) ?? 0) + 1)
    per.set(code, t)
    resolve?.()
  })
  vm.evm.events!.on('beforeMessage', (m: { codeAddress?: { toString(): string }; to?: { toString(): string } }, resolve?: () => void) => {
    frames.push({ code: (m.codeAddress ?? m.to)?.toString() ?? 'create', childGas: 0n })
    frameCount++
    resolve?.()
  })
  vm.evm.events!.on('afterMessage', (r: EVMResult, resolve?: () => void) => {
    const frame = frames.pop()!
    const used = r.execResult.executionGasUsed
    const t = per.get(frame.code) ?? { steps: 0, inline: 0, gas: 0n }
    t.gas += used - frame.childGas
    per.set(frame.code, t)
    if (frames.length > 0) frames[frames.length - 1].childGas += used
    resolve?.()
  })
  const data = typeof request.data === 'string' ? hexToBytesStrict(request.data, 'data') : (request.data ?? new Uint8Array(0))
  const block = forked.toEjsCallBlock()
  const result = await runDirectCall(vm, block, {
    caller: createAddressFromString(request.from),
    to: createAddressFromString(request.to!),
    data,
    value: request.value ?? 0n,
    gasLimit: request.gasLimit ?? block.header.gasLimit,
  })
  if (result === undefined) throw new Error('the direct call path did not run this call')
  return { per, gasUsed: result.totalGasSpent, executionGas: result.execResult.executionGasUsed }
}

const TIME = process.env.COUNT_TIME === '1'
const ROUNDS = Number(process.env.COUNT_ROUNDS ?? 5)
const MIXES = Number(process.env.COUNT_MIXES ?? 40)
const WARMUP = Number(process.env.COUNT_WARMUP ?? 20)

/** Uniswap's own venues of the devnet registry: bench:quote's single-venue configuration */
const UNISWAP_VENUES = JSON.stringify(
  (JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as { venues: Array<{ name: string }> }).venues.filter((v) => v.name === 'uniswap-v2' || v.name === 'uniswap-v3'),
)

/** process CPU ms (user + system) since `from` */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from)
  return (d.user + d.system) / 1000
}

/** Times the captured executions on the simulator's path: per round, EVM CPU ms per quote and ns per step. */
async function timeExecutions(sim: { call(state: SimulationState, request: CallRequest): Promise<unknown> }, captured: readonly { state: SimulationState; call: CallRequest }[], steps: number) {
  const pass = async () => {
    for (const c of captured) await sim.call(c.state, c.call)
  }
  for (let i = 0; i < WARMUP; i++) await pass()
  const rounds: { ms_per_quote: number; ns_per_step: number }[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const from = process.cpuUsage()
    for (let i = 0; i < MIXES; i++) await pass()
    const ms = cpuMsSince(from)
    rounds.push({ ms_per_quote: Math.round((1000 * ms) / (MIXES * QUOTE_MIX.length)) / 1000, ns_per_step: Math.round((ms * 1e6) / (MIXES * steps)) })
  }
  return { rounds, min_ms_per_quote: Math.min(...rounds.map((r) => r.ms_per_quote)), min_ns_per_step: Math.min(...rounds.map((r) => r.ns_per_step)) }
}

async function main() {
  const all = await countMix({})
  const timed: Record<string, unknown> = {}
  if (TIME) {
    const uniswap = await countMix({ VENUES: UNISWAP_VENUES })
    for (const [name, mix] of [['all', all], ['uniswap', uniswap], ['all', all], ['uniswap', uniswap]] as const) {
      const t = await mix.time()
      console.log(`${name.padEnd(8)} ${mix.executions} executions, ${mix.steps} steps per mix: EVM CPU ms per quote ${t.rounds.map((r) => r.ms_per_quote).join(' ')}, ns per step ${t.rounds.map((r) => r.ns_per_step).join(' ')}`)
      timed[name] = { executions: mix.executions, steps_per_mix: mix.steps, ...t }
    }
    await uniswap.close()
  }
  await all.close()
  console.log(JSON.stringify({ ...all.summary, ...(TIME ? { timed } : {}) }))
}

/** Runs the mix through the quote service of a domain opened with `env`, counts its router executions' steps; `time` times them. */
async function countMix(env: Record<string, string>) {
  const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0', ...(process.env.DEVNET_GENESIS === undefined ? {} : { DEVNET_GENESIS: process.env.DEVNET_GENESIS }), ...env }), { log: { warn: () => {} } })
  try {
    console.log(`venues: ${env.VENUES === undefined ? 'every venue of the registry' : "Uniswap's V2 and V3"}`)
    const router = domain.contracts.router
    const labels = registryLabels(router)
    const sim = domain.simulator
    const captured: { request: number; state: SimulationState; call: CallRequest; gasUsed: bigint }[] = []
    let current = -1
    const call = sim.call.bind(sim)
    sim.call = async (state, request) => {
      const result = await call(state, request)
      if (request.to?.toLowerCase() === router.toLowerCase()) captured.push({ request: current, state, call: request, gasUsed: result.gasUsed })
      return result
    }
    for (let i = 0; i < QUOTE_MIX.length; i++) {
      current = i
      await domain.quote.quote(QUOTE_MIX[i])
    }
    sim.call = call

    const byLabel = new Map<string, Tally>()
    const rows: Record<string, unknown>[] = []
    let totalSteps = 0
    let totalGas = 0n
    notInlined.clear()
    frameCount = 0
    for (const c of captured) {
      const { per, gasUsed } = await countSteps(sim.common, c.state, c.call)
      if (gasUsed !== c.gasUsed) throw new Error(`request ${c.request}: gas ${gasUsed} here, ${c.gasUsed} in the simulator`)
      const row: Record<string, { steps: number; inline: number; gas: string }> = {}
      let steps = 0
      for (const [address, t] of per) {
        const label = labels.get(address.toLowerCase()) ?? address
        // WETH apart from the DevnetERC20 tokens: a different contract
        const kind = label === 'tokens WETH' ? 'WETH' : label.startsWith('tokens ') ? 'DevnetERC20 tokens' : label
        row[label] = { steps: t.steps, inline: t.inline, gas: t.gas.toString() }
        steps += t.steps
        const k = byLabel.get(kind) ?? { steps: 0, inline: 0, gas: 0n }
        k.steps += t.steps
        k.inline += t.inline
        k.gas += t.gas
        byLabel.set(kind, k)
      }
      totalSteps += steps
      totalGas += gasUsed
      const m = QUOTE_MIX[c.request]
      const name = `${labels.get(m.tokenIn.toLowerCase())} -> ${labels.get(m.tokenOut.toLowerCase())}`
      console.log(`${name}: ${steps} steps, gasUsed ${gasUsed}`)
      for (const [label, t] of Object.entries(row).sort((a, b) => b[1].steps - a[1].steps)) console.log(`    ${label.padEnd(40)} ${String(t.steps).padStart(6)} steps (${String(t.steps - t.inline).padStart(5)} not inline) ${t.gas.padStart(8)} gas`)
      rows.push({ request: name, steps, gasUsed: gasUsed.toString(), contracts: row })
    }
    const n = captured.length
    console.log(`\nper execution (${n} executions of ${QUOTE_MIX.length} requests): ${(totalSteps / n).toFixed(0)} steps, ${(Number(totalGas) / n).toFixed(0)} gas`)
    for (const [label, t] of [...byLabel].sort((a, b) => b[1].steps - a[1].steps)) {
      console.log(`    ${label.padEnd(40)} ${(t.steps / n).toFixed(0).padStart(6)} steps (${((t.steps - t.inline) / n).toFixed(0).padStart(5)} not inline) ${(Number(t.gas) / n).toFixed(0).padStart(8)} gas  ${((100 * t.steps) / totalSteps).toFixed(1)}% of steps`)
    }
    const byOpcode = Object.fromEntries([...notInlined].sort((a, b) => b[1] - a[1]).map(([op, count]) => [op, Math.round((10 * count) / n) / 10]))
    console.log(`    call frames ${(frameCount / n).toFixed(1)}; not inlined, by opcode: ${Object.entries(byOpcode).map(([op, c]) => `${op} ${c}`).join(', ')}`)
    const summary = Object.fromEntries([...byLabel].map(([label, t]) => [label, { steps_per_execution: Math.round(t.steps / n), not_inline_steps_per_execution: Math.round((t.steps - t.inline) / n), gas_per_execution: Math.round(Number(t.gas) / n) }]))
    return {
      summary: { name: 'count-quote-steps', executions: n, requests: QUOTE_MIX.length, steps_per_execution: Math.round(totalSteps / n), gas_per_execution: Math.round(Number(totalGas) / n), frames_per_execution: Math.round((10 * frameCount) / n) / 10, not_inline_by_opcode: byOpcode, by_contract: summary, per_request: rows },
      executions: n,
      steps: totalSteps,
      time: () => timeExecutions(sim, captured, totalSteps),
      close: () => domain.close(),
    }
  } catch (err) {
    await domain.close()
    throw err
  }
}

await main()
