/**
 * Two measured hot spots of the stock ethereumjs interpreter, cached without changing semantics:
 *
 * 1. `_getValidJumpDestinations` re-analyses a contract's bytecode on every call frame (~14% of a
 *    swap simulation). Its result depends only on the code bytes and the EVM's opcode table, so it
 *    is memoised per (EVM, code object). Overlays hand out the same Uint8Array for the same code,
 *    and nothing mutates code arrays.
 * 2. `Common.isActivatedEIP` scans an array on every opcode (~10%). It is answered from a Set that
 *    is rebuilt whenever the Common replaces its activated-EIP array (on a hardfork change).
 *
 * 3. MSTORE pads its word to 32 bytes through array spreads (`setLengthLeft`), ~7% of a swap;
 *    the word is written from its hex form instead. Gas is charged before the handler runs and is
 *    untouched.
 *
 * Gas and results are identical with and without the patches (checked by the anvil comparison tests).
 */
import { Common } from '@ethereumjs/common'

interface JumpAnalysis {
  jumps: Uint8Array
  pushes: Record<number, bigint>
  opcodesCached: unknown[]
}

interface InterpreterLike {
  _evm: object
  _getValidJumpDestinations(code: Uint8Array): JumpAnalysis
}

interface CommonInternals {
  _activatedEIPsCache: number[]
  __eipSet?: Set<number>
  __eipSource?: number[]
}

let applied: Promise<void> | undefined
const jumpCache = new WeakMap<object, WeakMap<Uint8Array, JumpAnalysis>>()

export function applyInterpreterPatches(): Promise<void> {
  applied ??= apply()
  return applied
}

async function apply(): Promise<void> {
  const proto = Common.prototype as unknown as { isActivatedEIP(eip: number): boolean }
  proto.isActivatedEIP = function (this: CommonInternals, eip: number): boolean {
    const source = this._activatedEIPsCache
    let set = this.__eipSet
    if (set === undefined || this.__eipSource !== source) {
      set = new Set(source)
      this.__eipSet = set
      this.__eipSource = source
    }
    return set.has(eip)
  }

  // The Interpreter class is not exported; load the very module the EVM uses (same file URL).
  const evmEntry = import.meta.resolve('@ethereumjs/evm')
  const mod = (await import(new URL('./interpreter.js', evmEntry).href)) as {
    Interpreter: { prototype: InterpreterLike }
  }
  const iproto = mod.Interpreter.prototype
  const original = iproto._getValidJumpDestinations
  iproto._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array): JumpAnalysis {
    let perEvm = jumpCache.get(this._evm)
    if (perEvm === undefined) {
      perEvm = new WeakMap()
      jumpCache.set(this._evm, perEvm)
    }
    let analysis = perEvm.get(code)
    if (analysis === undefined) {
      analysis = original.call(this, code)
      perEvm.set(code, analysis)
    }
    return analysis
  }
}

interface RunStateLike {
  stack: { popN(n: number): bigint[] }
  memory: { write(offset: number, size: number, value: Uint8Array): void }
}
interface OpcodeEntry {
  opHandler: (runState: RunStateLike) => void
}

const ZEROS_64 = '0'.repeat(64)

function word32(word: bigint): Uint8Array {
  const hex = word.toString(16)
  return Buffer.from(hex.length === 64 ? hex : ZEROS_64.slice(hex.length) + hex, 'hex')
}

function fastMstore(runState: RunStateLike): void {
  const [offset, word] = runState.stack.popN(2)
  runState.memory.write(Number(offset), 32, word32(word))
}

/** Per-EVM patches (opcode handlers live in each EVM's opcode map). */
export function patchEvmInstance(evm: object): void {
  const map = (evm as { _opcodeMap?: OpcodeEntry[] })._opcodeMap
  const mstore = map?.[0x52]
  if (mstore !== undefined) mstore.opHandler = fastMstore
}
