/**
 * npx tsx scripts/probe/evm-profile.ts
 *
 * Where a warm quote's EVM time goes, in process (issue 12): scripts/count-quote-steps.ts bundled
 * (esbuild, so every function has one source line to attribute samples to), run with
 * `node --cpu-prof` and COUNT_TIME=1 (the captured router executions of the bench:quote mix timed on
 * the simulator's own path: COUNT_ROUNDS, default 10, rounds of COUNT_MIXES, default 10, passes
 * after COUNT_WARMUP, default 20), then the samples of the last PROBE_SHARE (0.7) of the profile
 * (the timing passes: the quotes that found the executions and the step-counting VM come first)
 * ranked three ways:
 *
 * - self time by where the code lives: a src/ file, a package's file, or V8's own entries
 *   ((garbage collector), (program)): which layer (batch, frames, state, memory, GC) spends it;
 * - self time by function (PROBE_TOP, 30);
 * - the inline batch's (`runInlineSteps`, src/evm/inline-steps.ts) line ticks grouped by the opcode
 *   whose code they are in (its `case`s, the PUSH / DUP / SWAP branches), the loop head and the
 *   step's fee and gas as `dispatch`: dispatch against stack traffic against bigint arithmetic.
 *
 * The per-contract split is count-quote-steps' own table (steps per contract; the batch's time per
 * step is nearly flat across contracts), printed before. Last line: one JSON object.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CpuProfile, ProfileNode } from '../lib/cpu-profile.ts'

const SHARE = Number(process.env.PROBE_SHARE ?? 0.7)
const TOP = Number(process.env.PROBE_TOP ?? 30)

/** a profile node as V8 writes it under --cpu-prof: with its samples' source lines */
type LineNode = ProfileNode & { positionTicks?: Array<{ line: number; ticks: number }> }

/** the names of the opcodes the batch has a `case` for (esbuild writes the case labels in decimal) */
const OPCODE_NAMES: Record<number, string> = {
  0x01: 'ADD', 0x02: 'MUL', 0x03: 'SUB', 0x04: 'DIV', 0x05: 'SDIV', 0x06: 'MOD', 0x07: 'SMOD', 0x08: 'ADDMOD', 0x09: 'MULMOD', 0x0b: 'SIGNEXTEND',
  0x10: 'LT', 0x11: 'GT', 0x12: 'SLT', 0x13: 'SGT', 0x14: 'EQ', 0x15: 'ISZERO', 0x16: 'AND', 0x17: 'OR', 0x18: 'XOR', 0x19: 'NOT', 0x1a: 'BYTE',
  0x1b: 'SHL', 0x1c: 'SHR', 0x1d: 'SAR', 0x30: 'ADDRESS', 0x33: 'CALLER', 0x34: 'CALLVALUE', 0x35: 'CALLDATALOAD', 0x36: 'CALLDATASIZE', 0x3d: 'RETURNDATASIZE',
  0x50: 'POP', 0x51: 'MLOAD/MSTORE', 0x52: 'MLOAD/MSTORE', 0x56: 'JUMP/JUMPI', 0x57: 'JUMP/JUMPI', 0x5a: 'GAS', 0x5b: 'JUMPDEST', 0x5f: 'PUSH0',
}

/**
 * The group of each line of the bundle's runInlineSteps, by the markers of its structure: the loop
 * head and the step's tail `dispatch`, the PUSH / DUP / SWAP branches, each `case` its opcode, a
 * binary operation's operand loads and result store apart from its `case`.
 */
function batchLineGroups(bundle: string[]): Map<number, string> {
  const groups = new Map<number, string>()
  const start = bundle.findIndex((l) => l.startsWith('function runInlineSteps('))
  if (start < 0) return groups
  let group = 'entry'
  let inner = false
  for (let n = start; n < bundle.length; n++) {
    const line = bundle[n].trim()
    const caseLabel = /^case (\d+):/.exec(line)
    if (line.startsWith('run: while')) group = 'dispatch'
    else if (line === 'if (op <= 127) {') group = 'PUSH'
    else if (line.startsWith('const target = entry >> 8')) group = 'PUSH+JUMP(I) fused'
    else if (line.startsWith('s[len++] = words[i]')) group = 'PUSH'
    else if (line === '} else if (op <= 143) {') group = 'DUP'
    else if (line === '} else if (op <= 159) {') group = 'SWAP'
    else if (line === '} else {' && group === 'SWAP') group = 'dispatch'
    else if (caseLabel !== null) group = OPCODE_NAMES[Number(caseLabel[1])] ?? `case ${caseLabel[1]}`
    else if (line === 'default: {' && !inner) {
      group = 'binary: operands'
      inner = true
    } else if (line.startsWith('s[len - 2] = r')) group = 'binary: result store'
    else if (line.startsWith('rs.programCounter = stream[')) group = 'exit'
    else if (line === 'gas -= fee;' && bundle[n + 1]?.trim() === 'steps++;' && bundle[n + 2]?.trim() === '}') group = 'dispatch'
    groups.set(n + 1, group)
    if (bundle[n] === '}') break
  }
  return groups
}

/** the source file of each line of an esbuild bundle (its `// path` comments) */
function bundleFiles(bundle: string[]): string[] {
  const files: string[] = []
  let current = '?'
  for (const line of bundle) {
    const m = /^\/\/ ((?:src|scripts|test)\/\S+)$/.exec(line)
    if (m !== null) current = m[1]
    files.push(current)
  }
  return files
}

/** where a sampled function lives: its src/ file in the bundle, a package's file, or V8's entry */
function areaOf(node: LineNode, bundleUrl: string, files: string[]): string {
  const { url, functionName, lineNumber } = node.callFrame
  if (url === bundleUrl || url.endsWith('/' + bundleUrl.split('/').pop())) return files[lineNumber] ?? '?'
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:dist\/(?:esm|cjs)\/)?(.*)$/.exec(url)
  return m !== null ? `${m[1]}/${m[2]}` : url.replace(/^file:\/\//, '')
}

function ranked(counts: Map<string, number>, total: number, top: number): Array<[string, number]> {
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => [k, Math.round((1000 * v) / total) / 10])
}

function main() {
  const dir = mkdtempSync(join(tmpdir(), 'evm-profile-'))
  // inside the tree, so the bundle resolves the packages from its node_modules
  const bundlePath = join('scripts', 'probe', `.evm-profile-${process.pid}.mjs`)
  try {
    execFileSync('npx', ['esbuild', 'scripts/count-quote-steps.ts', '--bundle', '--platform=node', '--format=esm', '--packages=external', `--outfile=${bundlePath}`], { stdio: ['ignore', 'ignore', 'inherit'] })
    const env = { ...process.env, COUNT_TIME: '1', COUNT_ROUNDS: process.env.COUNT_ROUNDS ?? '10', COUNT_MIXES: process.env.COUNT_MIXES ?? '10' }
    const run = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, bundlePath], { env, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 64 << 20 })
    if (run.status !== 0) throw new Error(`count-quote-steps exited with ${run.status}`)
    // its table (per contract) and timings, without its JSON line
    for (const line of run.stdout.trimEnd().split('\n').slice(0, -1)) console.log(line)
    const file = readdirSync(dir).map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0]
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile & { nodes: LineNode[] }
    const bundle = readFileSync(bundlePath, 'utf8').split('\n')
    const files = bundleFiles(bundle)
    const byId = new Map(profile.nodes.map((n) => [n.id, n]))
    const from = Math.floor(profile.samples.length * (1 - SHARE))
    const areas = new Map<string, number>()
    const functions = new Map<string, number>()
    const sampledNodes = new Map<number, number>()
    let total = 0
    for (let k = from; k < profile.samples.length; k++) {
      const node = byId.get(profile.samples[k])
      if (node === undefined) continue
      total++
      const area = areaOf(node, bundlePath, files)
      areas.set(area, (areas.get(area) ?? 0) + 1)
      const name = `${node.callFrame.functionName || '(anonymous)'} ${area}`
      functions.set(name, (functions.get(name) ?? 0) + 1)
      sampledNodes.set(node.id, (sampledNodes.get(node.id) ?? 0) + 1)
    }
    // the batch's line ticks (V8 keeps them per node over the whole profile, not per sample)
    const groups = batchLineGroups(bundle)
    const opcodes = new Map<string, number>()
    let batchTicks = 0
    for (const node of profile.nodes) {
      if (node.callFrame.functionName !== 'runInlineSteps' || node.positionTicks === undefined) continue
      for (const { line, ticks } of node.positionTicks) {
        const group = groups.get(line) ?? 'other'
        opcodes.set(group, (opcodes.get(group) ?? 0) + ticks)
        batchTicks += ticks
      }
    }
    const result = {
      name: 'evm-profile',
      samples: total,
      self_by_area_pct: Object.fromEntries(ranked(areas, total, TOP)),
      self_by_function_pct: Object.fromEntries(ranked(functions, total, TOP)),
      batch_line_ticks: batchTicks,
      batch_by_opcode_pct: Object.fromEntries(ranked(opcodes, batchTicks, 60)),
    }
    console.log('\nself time by area (% of the samples):')
    for (const [k, v] of Object.entries(result.self_by_area_pct)) console.log(`  ${String(v).padStart(5)}%  ${k}`)
    console.log('self time by function:')
    for (const [k, v] of Object.entries(result.self_by_function_pct)) console.log(`  ${String(v).padStart(5)}%  ${k}`)
    console.log("the batch's line ticks by opcode (% of its ticks):")
    for (const [k, v] of Object.entries(result.batch_by_opcode_pct)) console.log(`  ${String(v).padStart(5)}%  ${k}`)
    console.log(JSON.stringify(result))
  } finally {
    rmSync(bundlePath, { force: true })
    rmSync(dir, { recursive: true, force: true })
  }
}

main()
