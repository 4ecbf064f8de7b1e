/**
 * What the EVM's shared code analyses hold (issue 10): every distinct contract code of the devnet's
 * genesis analysed in one isolate through the patched `_getValidJumpDestinations`, as the frames
 * of a pooled EVM analyse a code the first time they run it, and the heap after two full
 * collections before and after (the analyses stay held by the shared table), with the typed arrays'
 * backing stores (outside the JS heap). Prints the retained bytes and bytes per code byte, then one
 * JSON line.
 *
 *   node --expose-gc --import tsx scripts/probe/analysis-memory.ts
 *
 * With PROBE_READ_STOCK=1 it also reads each analysis' stock tables (`opcodesCached`, `pushes`),
 * as the stock loop of a frame with a profiler does: what an analysis holds once they are made.
 */
import { readFileSync } from 'node:fs'
import { createVM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { applyInterpreterPatches } from '../../src/evm/interpreter-patches.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'

type Analyse = (this: unknown, code: Uint8Array) => Record<string, unknown>

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const genesis = JSON.parse(readFileSync(new URL('../../fixtures/devnet/genesis.json', import.meta.url), 'utf8')) as { alloc: Record<string, { code?: string }> }
const contents = new Map<string, Uint8Array>()
for (const account of Object.values(genesis.alloc)) {
  if (account.code === undefined || account.code === '0x') continue
  contents.set(account.code, Uint8Array.from(Buffer.from(account.code.slice(2), 'hex')))
}
const codes = [...contents.values()]
const codeBytes = codes.reduce((sum, code) => sum + code.length, 0)

await applyInterpreterPatches()
const common = commonForChain(31337n)
const vm = await createVM({ common, stateManager: JournaledState.over(EMPTY_STATE_READER) })
const mod = (await import(new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm')).href)) as { Interpreter: { prototype: { _getValidJumpDestinations: Analyse } } }
const analyse = mod.Interpreter.prototype._getValidJumpDestinations
const opcodes = (vm.evm as unknown as { _opcodeMap: unknown[] })._opcodeMap
const self = { common, _evm: vm.evm, lookupOpInfo: (op: number) => opcodes[op] }

/** the JS heap and the typed arrays' backing stores (outside the heap: the jump table, entries and stream) */
const heapAfterGc = () => {
  gc()
  gc()
  const usage = process.memoryUsage()
  return { heap: usage.heapUsed, buffers: usage.arrayBuffers }
}
const readStock = process.env.PROBE_READ_STOCK === '1'
const before = heapAfterGc()
const held: unknown[] = []
for (const code of codes) {
  const analysis = analyse.call(self, code)
  if (readStock) held.push(analysis.opcodesCached, analysis.pushes)
}
const after = heapAfterGc()
const heap = after.heap - before.heap
const buffers = after.buffers - before.buffers
const retained = heap + buffers
console.log(`${codes.length} contents, ${codeBytes} code bytes: ${(retained / 1e6).toFixed(2)} MB retained (heap ${(heap / 1e6).toFixed(2)}, array buffers ${(buffers / 1e6).toFixed(2)}), ${(retained / codeBytes).toFixed(1)} B per code byte`)
console.log(JSON.stringify({ name: 'analysis-memory', contents: codes.length, code_bytes: codeBytes, retained_bytes: retained, heap_bytes: heap, array_buffer_bytes: buffers, bytes_per_code_byte: Number((retained / codeBytes).toFixed(2)), read_stock: readStock, held: held.length }))
