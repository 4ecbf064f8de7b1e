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
 * 3. `runStep` is an async function, so every opcode allocates a promise even when nothing in it
 *    awaits. For the common case (static gas, synchronous handler, no tracer, no debug, no
 *    stateless witness, no pending EIP-7928 call) the step runs synchronously, doing exactly what
 *    the stock step does in that case: charge the static fee, advance the pc, run the handler.
 *    Memory-only dynamic gas (MLOAD, MSTORE, KECCAK256, copies, RETURN, ...) and SLOAD's access
 *    cost are computed by the synchronous twins in sync-gas.ts; an async handler (SLOAD's read)
 *    is returned as the step's only promise. Every other step goes to the stock implementation. Errors propagate the same way: the
 *    interpreter's `await this.runStep()` sits in the same try block either way.
 * 4. MSTORE pads its word to 32 bytes through array spreads (`setLengthLeft`), ~7% of a swap;
 *    the word is written from its hex form instead. Gas is charged before the handler runs and is
 *    untouched.
 * 5. `Interpreter.run` awaits every step, so even a synchronous step (3.) costs a microtask turn
 *    per opcode. For legacy (non-EOF) code without profiler or binary-tree witness, `run` is the
 *    stock loop line for line except that it awaits a step only when the step returned a promise:
 *    a step that cannot suspend never yields. Same jump analysis, same error handling (VM errors
 *    end the frame, STOP is not an error, anything else is rethrown), same EIP-8037 epilogue.
 *    EOF containers, the profiler and EIP-7864 go to the stock `run`.
 *
 * Gas and results are identical with and without the patches (checked by the anvil comparison tests).
 */
import { Common } from '@ethereumjs/common'
import { EthereumJSErrorWithoutCode } from '@ethereumjs/util'
import { loadSyncGasHandlers, type GasRunState } from './sync-gas.ts'

interface JumpAnalysis {
  jumps: Uint8Array
  pushes: Record<number, bigint>
  opcodesCached: unknown[]
}

interface OpInfo {
  code: number
  dynamicGas: boolean
  isAsync: boolean
  isInvalid: boolean
  feeBigInt: bigint
}
interface StepEntry {
  opcodeInfo: OpInfo
  opHandler: (runState: unknown, common: unknown) => void
}
interface InterpreterLike {
  _evm: { DEBUG: boolean; events: { listenerCount(name: string): number } }
  _runState: { opCode: number; programCounter: number; eip7928PostTargetCallOog?: unknown; env: { accessWitness?: { commit(): void } } }
  common: { isActivatedEIP(eip: number): boolean }
  profilerOpts?: { enabled?: boolean }
  _getValidJumpDestinations(code: Uint8Array): JumpAnalysis
  lookupOpInfo(op: number): StepEntry
  useGas(amount: bigint, context: OpInfo): void
  runStep(entry?: StepEntry): Promise<void> | undefined
}

interface RunResult {
  runState: unknown
  exceptionError?: unknown
}
interface LoopRunState {
  programCounter: number
  opCode: number
  code: Uint8Array
  validJumps: Uint8Array
  cachedPushes: Record<number, bigint>
  shouldDoJumpAnalysis: boolean
  gasLeft: bigint
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean
  env: { accessWitness?: { revert(): void } }
}
interface RunnableInterpreter extends InterpreterLike {
  run(code: Uint8Array, opts?: { pc?: number }): Promise<RunResult>
}
interface EvmErrorModule {
  EVMError: { new (error: string): unknown; errorMessages: Record<string, string> }
  EVMErrorTypeString: string
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
  const iproto = mod.Interpreter.prototype as RunnableInterpreter
  const original = iproto._getValidJumpDestinations
  const stockRunStep = iproto.runStep
  const stockRun = iproto.run
  const { EVMError, EVMErrorTypeString } = (await import(new URL('./errors.js', evmEntry).href)) as EvmErrorModule
  const STOP = EVMError.errorMessages.STOP
  const OUT_OF_GAS = EVMError.errorMessages.OUT_OF_GAS
  const syncGas = await loadSyncGasHandlers()
  iproto.runStep = function (this: InterpreterLike, entry?: StepEntry): Promise<void> | undefined {
    const opEntry = entry ?? this.lookupOpInfo(this._runState.opCode)
    const info = opEntry.opcodeInfo
    const gasFn = info.dynamicGas ? syncGas.get(info.code) : undefined
    if (
      (info.dynamicGas && gasFn === undefined) ||
      info.isInvalid ||
      this._evm.DEBUG ||
      this.profilerOpts?.enabled === true ||
      this._runState.eip7928PostTargetCallOog !== undefined ||
      this._evm.events.listenerCount('step') > 0 ||
      this.common.isActivatedEIP(6800) ||
      this.common.isActivatedEIP(7864)
    ) {
      return stockRunStep.call(this, opEntry)
    }
    const gas = gasFn === undefined ? info.feeBigInt : gasFn(this._runState as unknown as GasRunState, info.feeBigInt, this.common as unknown as Common)
    this.useGas(gas, info)
    this._runState.programCounter++
    if (info.isAsync) {
      // a state-reading handler (SLOAD, ...): one promise instead of three
      const pending = opEntry.opHandler(this._runState, this.common) as unknown as Promise<void>
      const witness = this._runState.env.accessWitness
      return witness === undefined ? pending : pending.then(() => witness.commit())
    }
    opEntry.opHandler(this._runState, this.common)
    this._runState.env.accessWitness?.commit()
    return undefined
  }

  iproto.run = async function (this: RunnableInterpreter, code: Uint8Array, opts: { pc?: number } = {}): Promise<RunResult> {
    if (this.profilerOpts?.enabled === true || (code[0] === 0xef && this.common.isActivatedEIP(3540)) || this.common.isActivatedEIP(7864)) {
      return stockRun.call(this, code, opts)
    }
    const rs = this._runState as unknown as LoopRunState
    rs.code = code
    rs.programCounter = opts.pc ?? rs.programCounter
    const pc = rs.programCounter
    if (pc !== 0 && (pc < 0 || pc >= rs.code.length)) throw EthereumJSErrorWithoutCode('Internal error: program counter not in range')
    let err: unknown
    let cachedOpcodes: StepEntry[] | undefined
    let doJumpAnalysis = true
    while (rs.programCounter < rs.code.length) {
      const programCounter = rs.programCounter
      let opCode: number
      let opCodeObj: StepEntry | undefined
      if (doJumpAnalysis) {
        opCode = rs.code[programCounter]
        // the analysis runs once the code is seen to jump (JUMP, JUMPI, MCOPY as in the stock loop)
        if (opCode === 0x56 || opCode === 0x57 || opCode === 0x5e) {
          const { jumps, pushes, opcodesCached } = this._getValidJumpDestinations(rs.code)
          rs.validJumps = jumps
          rs.cachedPushes = pushes
          rs.shouldDoJumpAnalysis = false
          cachedOpcodes = opcodesCached as StepEntry[]
          doJumpAnalysis = false
        }
      } else {
        opCodeObj = cachedOpcodes![programCounter]
        opCode = opCodeObj.opcodeInfo.code
      }
      rs.opCode = opCode
      try {
        const pending = this.runStep(opCodeObj)
        if (pending !== undefined) await pending
      } catch (e) {
        rs.env.accessWitness?.revert()
        // as the stock loop: a non-VM error is a bug or a failed state read, rethrown
        if (!('errorType' in (e as object) && (e as { errorType: unknown }).errorType === EVMErrorTypeString)) throw e
        if ((e as { error: unknown }).error !== STOP) err = e
        break
      }
    }
    if (err === undefined && rs.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && rs.gasLeft > 0n) {
      rs.gasLeft = 0n
      err = new EVMError(OUT_OF_GAS)
    }
    return { runState: rs, exceptionError: err }
  }

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
