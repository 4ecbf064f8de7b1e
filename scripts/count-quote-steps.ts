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
 */
import type { Common } from '@ethereumjs/common'
import { createVM } from '@ethereumjs/vm'
import { createAddressFromString } from '@ethereumjs/util'
import type { EVMResult } from '@ethereumjs/evm'
import { hexToBytesStrict } from '../src/chain/quantity.ts'
import type { Address } from '../src/chain/types.ts'
import { runDirectCall } from '../src/evm/direct-call.ts'
import { INLINE_OPCODES } from '../src/evm/inline-steps.ts'
import type { CallRequest, SimulationState } from '../src/evm/simulator.ts'
import { loadConfig } from '../src/node/config.ts'
import { openDomainServices } from '../src/node/domain.ts'
import { QUOTE_MIX } from '../test/support/quote-mix.ts'
import { loadRegistry } from '../test/support/devnet.ts'

interface Tally {
  steps: number
  /** of which opcodes the interpreter loop runs inline (src/evm/inline-steps.ts): the cheap ones */
  inline: number
  gas: bigint
}

const INLINE = new Set(INLINE_OPCODES)

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
  vm.evm.events!.on('step', (e: { codeAddress: { toString(): string }; opcode: { code: number } }, resolve?: () => void) => {
    const code = e.codeAddress.toString()
    const t = per.get(code) ?? { steps: 0, inline: 0, gas: 0n }
    t.steps++
    if (INLINE.has(e.opcode.code)) t.inline++
    per.set(code, t)
    resolve?.()
  })
  vm.evm.events!.on('beforeMessage', (m: { codeAddress?: { toString(): string }; to?: { toString(): string } }, resolve?: () => void) => {
    frames.push({ code: (m.codeAddress ?? m.to)?.toString() ?? 'create', childGas: 0n })
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

async function main() {
  const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0', ...(process.env.DEVNET_GENESIS === undefined ? {} : { DEVNET_GENESIS: process.env.DEVNET_GENESIS }) }), { log: { warn: () => {} } })
  try {
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
    const summary = Object.fromEntries([...byLabel].map(([label, t]) => [label, { steps_per_execution: Math.round(t.steps / n), not_inline_steps_per_execution: Math.round((t.steps - t.inline) / n), gas_per_execution: Math.round(Number(t.gas) / n) }]))
    console.log(JSON.stringify({ name: 'count-quote-steps', executions: n, requests: QUOTE_MIX.length, steps_per_execution: Math.round(totalSteps / n), gas_per_execution: Math.round(Number(totalGas) / n), by_contract: summary, per_request: rows }))
  } finally {
    await domain.close()
  }
}

await main()
