/**
 * Measured hot spots of the stock ethereumjs interpreter, patched without changing semantics:
 *
 * 1. `_getValidJumpDestinations` analyses a contract's bytecode on every call frame (~14% of a
 *    swap simulation). Its result depends only on the code bytes and the opcode table, which is
 *    the same for every EVM built on one Common and hardfork (every VM of a pool), so it is shared
 *    by those EVMs: found by code object first, then by content (SHA-256 of the code: 11 V3 pools
 *    hold the same bytes in different arrays). Nothing mutates code arrays or analyses. The
 *    content-keyed table is bounded (least recently used out past 4 MiB of code).
 * 2. `Common.isActivatedEIP` scans an array on every opcode (~10%). It is answered from a table
 *    of flags indexed by EIP number, rebuilt whenever the Common replaces its activated-EIP array
 *    (on a hardfork change). `Common.param` (a bigint made anew on every call) and
 *    `Common.gteHardfork` (a walk over the hardfork table), asked per frame and per opcode, are
 *    answered from tables kept while the parameters and the hardfork stay the same.
 * 3. `runStep` is an async function, so every opcode allocates a promise even when nothing in it
 *    awaits. For the common case (static gas, synchronous handler, no tracer, no debug, no
 *    stateless witness, no pending EIP-7928 call) the step runs synchronously, doing exactly what
 *    the stock step does in that case: charge the static fee, advance the pc, run the handler.
 *    Memory-only dynamic gas (MLOAD, MSTORE, KECCAK256, copies, RETURN, ...), SLOAD's and
 *    EXTCODESIZE's access costs are computed by the synchronous twins in sync-gas.ts; an async handler (SLOAD's read)
 *    is returned as the step's only promise. Every other step goes to the stock implementation.
 * 4. MLOAD and MSTORE convert between bigint and bytes through hex strings (MSTORE also through
 *    array spreads, `setLengthLeft`), ~680 ns each, ~420 of them in a V3 swap: word-memory.ts
 *    reads and writes the word as four 64-bit halves of a DataView over memory, and decides the
 *    memory gas of an access inside paid memory without bigint division. Gas is charged before
 *    the handler runs and is untouched.
 * 5. `Interpreter.run` awaits every step, so even a synchronous step (3.) costs a microtask turn
 *    per opcode. For legacy (non-EOF) code without profiler or binary-tree witness, `run` is the
 *    stock loop line for line except that it awaits a step only when the step returned a promise:
 *    a step that cannot suspend never yields. Same jump analysis, same error handling (VM errors
 *    end the frame, STOP is not an error, anything else is rethrown), same EIP-8037 epilogue.
 *    What the fast step (3.) asks of the frame (no debug, no profiler, no step listener, no
 *    stateless EIP 6800/7864) is asked once per frame, not once per opcode: none of it changes
 *    while a frame runs. EOF containers, the profiler and EIP-7864 go to the stock `run`.
 * 6. The execution budget (execution-budget.ts): the loop of 5. reads the running execution's
 *    deadline from the EVM once per frame, checks it as the frame starts (so deep or wide call
 *    trees are caught, however few steps each frame runs) and every DEADLINE_CHECK_STEPS steps,
 *    and abandons the execution with an ExecutionBudgetError past it. Without a deadline (a VM
 *    outside the pool) nothing is checked. The stock `run` of 5.'s exceptions checks nothing.
 * 7. Memory (memory-patches.ts): the copy opcodes pad short sources byte by byte through array
 *    spreads (~50 us a kilobyte; 45 of the 48 s the stock interpreter took on ethereum/tests
 *    QuadraticComplexitySolidity_CallDataCopy), and every frame allocated its grown memory twice.
 *    The copies write into memory directly; frames' buffers come from a bounded pool and go back
 *    to it when the frame ends (here, at the end of the loop of 5.), zeroed only where written.
 * 8. Call frames (frame-patches.ts): `EVM.runInterpreter` and `EVM._executeCall` build objects
 *    by V8's slow object-spread path (~65 us a frame, a snapshot nobody reads), and the EVM
 *    journal keeps two entries of three collections per frame for the whole transaction; the
 *    same functions without that. `Common.consensusType`, asked by every frame, walks the
 *    hardfork table: answered once per hardfork, as isActivatedEIP (2.).
 * 9. STOP ends a frame by throwing (its handler traps a STOP error that the loop catches): ~1 us
 *    a frame, and most frames of QuadraticComplexitySolidity_CallDataCopy end so. On the fast
 *    path (5.) the loop charges STOP's fee and advances the pc as the stock step does, and ends
 *    the frame without the throw. `_emit`, which the EVM awaits twice a call frame
 *    (beforeMessage, afterMessage), is an async function that copies the listener array even
 *    when there is none: per EVM (patchEvmInstance), with no listener it answers a resolved
 *    promise at once.
 * 10. Addresses (address-patches.ts): the state manager and the journal turn the same Address
 *    into a hex string about ten times a frame, ~20 intermediate strings each; the hex is kept on
 *    the Address, and the journal's warm-address keys use Node's hex encoder.
 * 11. Storage (storage-slots.ts): SLOAD and SSTORE turned keys and values from bigints into
 *    bytes (through hex strings and array spreads) and back at every layer, and the journal's
 *    warm-slot keys into hex through noble: on the project's overlay they read and write bigints,
 *    and the EIP-2200 gas and EIP-2929 slot access are the stock functions over the words, the
 *    journal keyed by the hex made once from the slot's word.
 * 12. KECCAK256 (keccak-opcode.ts): the stock handler copies the memory range and turns the digest
 *    into a bigint through a JavaScript hex encoder; here memory is hashed in place (with the
 *    native keccak of keccak.ts when it loads) and the digest converted through Node's; so is
 *    CALLDATALOAD's word (calldata-load.ts), and LOG's topics (log-opcode.ts; LOG's gas is
 *    computed by sync-gas.ts, so a LOG is a synchronous step).
 * 13. Inline steps (inline-steps.ts): in a pooled EVM, once the frame has its jump analysis, the
 *    loop of 5. runs PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST, the arithmetic, comparison and
 *    bitwise opcodes of static fee, ADDRESS, CALLER, CALLVALUE, CALLDATASIZE, RETURNDATASIZE, GAS, CALLDATALOAD
 *    of a whole word, and MLOAD and MSTORE (inside paid memory, or growing it by less than 16 MiB,
 *    their memory gas the stock `subMemUsage`'s in numbers) itself, in batches of consecutive
 *    ones (runInlineSteps: the program counter and stack height in locals, no call per step),
 *    where the EVM has their stock handlers (the batch walks the code as a stream of decoded
 *    instructions, a PUSH and the JUMP or JUMPI after it as one step of two where the word is a
 *    valid destination: inline-analysis.ts, made with the jump analysis of 1.; the stock PUSH
 *    handler's per-offset words, read only on the steps the batch leaves to the stock step, are
 *    made from the code when one first reads them) (for CALLDATALOAD, MLOAD and MSTORE the ones of 4. and
 *    12., MLOAD's and MSTORE's gas the stock memory gas; KECCAK256 of up to 128 bytes with its word
 *    and memory gas, and TLOAD, where the EVM has the handlers of 12. and 14.: a third of the
 *    batch's exits were at them; ethereumjs flags ADDRESS, CALLER, CALLVALUE,
 *    CALLDATA* and RETURNDATASIZE asynchronous, but their handlers are not), with the frame's gas
 *    as a number (while it is below 2^53) written back to the run state before any other step
 *    that reads or writes it and when the frame ends. An inlined opcode that would fail
 *    (gas, stack, jump) runs the stock step instead, which fails as it always did. Every other
 *    synchronous step whose gas is static or computed by sync-gas.ts (MLOAD, MSTORE, KECCAK256,
 *    CALLDATALOAD, RETURN, REVERT, ...) is run as fastStep runs it but with the gas kept a number:
 *    only GAS, the asynchronous steps (calls, creations, storage) and the stock ones see it
 *    written back. A dynamic fee above the gas left goes through the stock useGas (after the gas
 *    function has run, as in the stock step), which halts out of gas.
 * 14. Transient storage (transient-storage-opcodes.ts): TLOAD and TSTORE turned the slot key into
 *    bytes and the transient storage turned them back into hex for its map; here the key's hex is
 *    made from the bigint and the storage's map and journal used as its get and put use them.
 * 15. RETURN ends a frame by throwing, as STOP does (9.): its stock handler reads the return data
 *    and calls `Interpreter.finish`, which traps a STOP error for the loop to catch (~20 RETURNs a
 *    bench:quote execution, 1.1% of its CPU in `trap` alone). On the numeric-gas path of 13., where
 *    the EVM has the stock RETURN handler, the loop does what the handler does (pops offset and
 *    length, sets the result's return value to a copy of that memory) and ends the frame as the
 *    catch does for STOP, without the throw. REVERT keeps its throw: its error is the frame's result.
 * 16. CALL and STATICCALL (call-opcodes.ts): the stock gas handler and handler each made the
 *    target's Address from the stack word through a hex string and a padding copy, and its hex
 *    again for the journal and the state; here it is made once from the word's hex, with that hex
 *    and the word kept on it, and the same Address answered to the handler. The EIP-7702 check
 *    and the return data's copy into memory read bytes in place.
 * 17. The stock loop analyses a frame's code when it first reaches a JUMP, JUMPI or MCOPY, and
 *    until then runs every step through the opcode table (PUSH through `bytesToBigInt`, a hex
 *    string per word): ~8 steps a frame (Solidity's prologue: the free memory pointer, the
 *    calldata size check), ~1% of a bench:quote execution's steps but each ~30x an inlined one.
 *    In a pooled EVM a frame whose code array already has its shared analysis (1.; any frame
 *    after the first to run that code) takes it as it starts, and the batch of 13. runs from
 *    its first step. The analysis is a pure function of the code: the words PUSH pushes, the
 *    valid destinations and the opcode entries are those the stock loop would compute at its
 *    first jump (the step before it reads the same word from the code bytes, the same entry
 *    from the table).
 * 18. The loop reads a step that leaves the batch of 13. (~260 a bench:quote execution: SLOAD,
 *    KECCAK256, TLOAD, SSTORE, RETURN, CALL...) from the EVM's opcode table by its code byte, as
 *    the stock `lookupOpInfo` does, not from the analysis' `opcodesCached` (the same entries, one
 *    per byte of the code: a load at a scattered offset of an array of the code's length; and
 *    those of the EVM that made the analysis, shared by every EVM of its Common, so an EVM with
 *    other entries, custom opcodes, ran that EVM's after its first jump).
 * 19. EXTCODESIZE (code-size-opcode.ts): the stock handler made the target's Address through a
 *    hex string, in an async function of its own; here through call-opcodes.ts's `addressOfWord`,
 *    in a plain function answering the code read's promise.
 *
 * Gas and results are identical with and without the patches (checked by the anvil and geth
 * comparison tests and the state tests; interpreter-patches.test.ts, frame-patches.test.ts and
 * execution-budget.test.ts check what the patches themselves promise).
 */
import { createHash } from 'node:crypto'
import { Common } from '@ethereumjs/common'
import { Address, EthereumJSErrorWithoutCode } from '@ethereumjs/util'
import { DEADLINE_CHECK_STEPS, checkDeadline, checkFrameStart, executionDeadline } from './execution-budget.ts'
import { addressWord, patchAddresses, type AddressPatchModules, type AddressWithBytes } from './address-patches.ts'
import { patchFrames, type FramePatchModules } from './frame-patches.ts'
import { copyHandlers, extendMemory, releaseFrameMemory, writeMemory, type CopyInternals, type CopyRunState, type PatchedMemory } from './memory-patches.ts'
import { loadSyncGasHandlers, type GasRunState, type SyncGasHandler } from './sync-gas.ts'
import { mload, mstore } from './word-memory.ts'
import { keccakOpcode } from './keccak-opcode.ts'
import { calldataLoad } from './calldata-load.ts'
import { logOpcode } from './log-opcode.ts'
import { inlineAnalysis, legacyCodeAnalysis } from './inline-analysis.ts'
import { INLINE_OPCODES, INLINE_OWN_HANDLER_OPCODES, INLINE_STATE_OPCODES, runInlineSteps, type InlineBatch, type InlineCode, type InlineRunState } from './inline-steps.ts'
import { transientStorageHandlers, type TransientRunState } from './transient-storage-opcodes.ts'
import { callHandlers, type CallHandlers, type CallInternals } from './call-opcodes.ts'
import { codeSizeHandler, type CodeSizeRunState } from './code-size-opcode.ts'
import { patchStorageJournal, storageHandlers, type StorageHandlers, type StorageInternals, type StorageJournalModule } from './storage-slots.ts'

interface JumpAnalysis {
  jumps: Uint8Array
  /** the stock PUSH handler's words by push data offset: an accessor, made when first read (withLazyStockTables) */
  pushes: Record<number, bigint>
  /** the stock loop's opcode entry per code byte: an accessor, made when first read */
  opcodesCached: unknown[]
  /** 13. the code as the inline batch walks it (inline-analysis.ts) */
  inline: InlineCode
  /** what the patched loop gives a frame's run state as `cachedPushes`: reads `pushes` only when a stock PUSH step does */
  pushView: Record<number, bigint>
}

interface OpInfo {
  code: number
  fee: number
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
  _evm: { DEBUG: boolean; events: { listenerCount(name: string): number }; [INLINE_FEES]?: Uint8Array; _opcodeMap: StepEntry[] }
  _runState: { opCode: number; programCounter: number; eip7928PostTargetCallOog?: unknown; env: { accessWitness?: { commit(): void } } }
  common: { isActivatedEIP(eip: number): boolean; param(name: string): bigint }
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
  eip7928PostTargetCallOog?: unknown
  env: { accessWitness?: { revert(): void; commit(): void } }
  memory: PatchedMemory & { read(offset: number, size: number): Uint8Array }
  stack: object
}
interface RunnableInterpreter extends InterpreterLike {
  _result: { returnValue?: Uint8Array }
  run(code: Uint8Array, opts?: { pc?: number }): Promise<RunResult>
}
interface EvmErrorModule {
  EVMError: { new (error: string): unknown; errorMessages: Record<string, string> }
  EVMErrorTypeString: string
}

interface CommonInternals {
  _activatedEIPsCache: number[]
  _paramsCache: object
  __params?: Map<string, bigint>
  __paramsSource?: object
  __gte?: Map<string, boolean>
  __gteHardfork?: string
  __eipFlags?: Uint8Array
  __eipSource?: number[]
  __consensusHardfork?: string
  __consensusType?: string
  hardfork(): string
}

let applied: Promise<void> | undefined

export function applyInterpreterPatches(): Promise<void> {
  applied ??= apply()
  return applied
}

/** Code bytes analysed at most in the content-keyed table of one Common (the analyses take ~17.0 bytes per code byte on the devnet (a PUSH word repeated within a code held once), ~10 of them typed arrays outside the JS heap: the jump table, the words, the instruction stream of 13.; the stock loop's opcode entries and per-offset words, ~19 more, only once it reads them). */
export const SHARED_ANALYSIS_CODE_BYTES = 4 * 1024 * 1024

/** The jump analyses shared by the EVMs of one Common while its EIP set stays the same. */
interface SharedAnalyses {
  eips: number[]
  byCode: WeakMap<Uint8Array, JumpAnalysis>
  byContent: Map<string, JumpAnalysis>
  bytes: number
}
const sharedAnalyses = new WeakMap<object, SharedAnalyses>()

function analysesOf(common: CommonInternals): SharedAnalyses {
  let shared = sharedAnalyses.get(common)
  if (shared === undefined || shared.eips !== common._activatedEIPsCache) {
    shared = { eips: common._activatedEIPsCache, byCode: new WeakMap(), byContent: new Map(), bytes: 0 }
    sharedAnalyses.set(common, shared)
  }
  return shared
}

function sharedAnalysis(common: CommonInternals, code: Uint8Array, analyse: () => JumpAnalysis): JumpAnalysis {
  const shared = analysesOf(common)
  let analysis = shared.byCode.get(code)
  if (analysis !== undefined) return analysis
  const key = contentKey(code)
  analysis = shared.byContent.get(key)
  if (analysis !== undefined) {
    shared.byContent.delete(key) // most recently used last
  } else {
    analysis = analyse()
    shared.bytes += code.length
    for (const [oldKey, old] of shared.byContent) {
      if (shared.bytes <= SHARED_ANALYSIS_CODE_BYTES) break
      shared.byContent.delete(oldKey)
      shared.bytes -= old.jumps.length
    }
  }
  shared.byContent.set(key, analysis)
  shared.byCode.set(code, analysis)
  return analysis
}

/**
 * Analyses `code` for `evm`'s Common as the patched `_getValidJumpDestinations` does when a frame
 * first jumps, before any frame runs it: an isolate that will run a known contract (a venue's pool,
 * the router) holds its analysis from its start, instead of making it the first time a request
 * crosses that contract minutes later (the eighteenth session's soak snapshots: most of what the
 * main isolate's live heap gained after the first minute). The same table, bound and LRU order as
 * an analysis made by a frame; a frame of any EVM on that Common then finds it by content.
 * `evm` is a pooled (patched) EVM's, or one made alike: the lazy stock opcode table reads its
 * `_opcodeMap`. Returns whether an analysis was made (false: empty code, or analysed already).
 */
export function analyseCodeAhead(evm: object, code: Uint8Array): boolean {
  if (sharedJumpAnalysis === undefined) throw new Error('analyseCodeAhead: applyInterpreterPatches() has not run')
  if (code.length === 0) return false
  const target = evm as { common: CommonInternals; _opcodeMap: StepEntry[] }
  if (hasSharedAnalysis(target.common, code)) return false
  // what the stock analysis and sharedJumpAnalysis read of an interpreter: its EVM, Common and opcode lookup
  const interpreter = { _evm: target, common: target.common, lookupOpInfo: (op: number) => target._opcodeMap[op] }
  sharedJumpAnalysis.call(interpreter as unknown as InterpreterLike, code)
  return true
}

/** Whether `common`'s shared analyses hold one for `code`'s content (a hash, no analysis, the LRU order untouched). */
export function hasSharedAnalysis(common: object, code: Uint8Array): boolean {
  const shared = sharedAnalyses.get(common)
  if (shared === undefined || shared.eips !== (common as CommonInternals)._activatedEIPsCache) return false
  return shared.byCode.has(code) || shared.byContent.has(contentKey(code))
}

/** the content-keyed table's key: 11 V3 pools hold the same bytes in different arrays */
function contentKey(code: Uint8Array): string {
  return createHash('sha256').update(code).digest('base64')
}

/** 17. the shared analysis of this very code array, if one was made (a WeakMap lookup: no hash, no analysis) */
function analysedAlready(common: CommonInternals, code: Uint8Array): JumpAnalysis | undefined {
  const shared = sharedAnalyses.get(common)
  if (shared === undefined || shared.eips !== common._activatedEIPsCache) return undefined
  return shared.byCode.get(code)
}

/**
 * A shared analysis whose `opcodesCached` (the stock loop's table entry per code byte) and `pushes`
 * (the stock PUSH handler's word per push data offset) are made when first read, by the stock
 * analysis itself (so they are what the stock loop would have). Only the stock loop and the stock
 * step read them (a frame the patched loop leaves to the stock loop: a profiler, EOF code,
 * EIP-7864; a step the batch leaves to the stock step: a stack overflow, a frame with a step
 * listener; 18.), so the analyses kept for every code content an isolate has run (the eighteenth
 * session's soak snapshots: ~0.5 MB per devnet V3 pool, made the first time the isolate runs that
 * pool, most of what the main isolate's live heap gained after the first minute) do not hold one
 * 8-byte slot per code byte for each that the patched loop never reads. The opcode entries are
 * `opcodeMap`'s, the EVM's that made the analysis, as the stock table's are its `lookupOpInfo`.
 * `pushView` is what a frame's run state holds as `cachedPushes` in the patched loop: a view that
 * asks `pushes` only when a stock PUSH step reads it.
 */
function withLazyStockTables(
  analysis: Pick<JumpAnalysis, 'jumps' | 'inline'>,
  code: Uint8Array,
  stock: (code: Uint8Array) => Pick<JumpAnalysis, 'pushes' | 'opcodesCached'>,
): JumpAnalysis {
  let tables: Pick<JumpAnalysis, 'pushes' | 'opcodesCached'> | undefined
  const stockTables = () => (tables ??= stock(code))
  const pushView = new Proxy({} as Record<number, bigint>, { get: (_, offset) => (stockTables().pushes as Record<PropertyKey, bigint>)[offset] })
  Object.defineProperty(analysis, 'pushView', { value: pushView, enumerable: false })
  Object.defineProperty(analysis, 'opcodesCached', { get: () => stockTables().opcodesCached, enumerable: true })
  Object.defineProperty(analysis, 'pushes', { get: () => stockTables().pushes, enumerable: true })
  return analysis as JumpAnalysis
}

/** the patched `_getValidJumpDestinations` (1.): 17. reads its shared analyses only where an interpreter has it */
let sharedJumpAnalysis: ((this: InterpreterLike, code: Uint8Array) => JumpAnalysis) | undefined

/**
 * The frame's run state and batch take `analysis` as the stock loop takes its analysis at the
 * first jump (and the batch its PUSH-then-jump destinations). The loop then reads each step's
 * entry from the EVM's opcode table by the code byte (18.), not from the analysis' `opcodesCached`,
 * and a stock PUSH step its word through `pushView` (made from the code only if one does).
 */
function adoptAnalysis(rs: LoopRunState, batch: InlineBatch, analysis: JumpAnalysis): void {
  batch.code = analysis.inline
  rs.validJumps = analysis.jumps
  rs.cachedPushes = analysis.pushView
  rs.shouldDoJumpAnalysis = false
}

/** Returned by `fastStep` when the stock step must run the opcode. */
const STOCK = Symbol('stock step')

/** per pooled EVM: the static fee of each opcode the loop may run itself (13.), 0 for the others (no inlined opcode is free) */
const INLINE_FEES = Symbol('fees of the inlined opcodes')

/** opcodes ethereumjs flags asynchronous whose handlers (the stock ones, calldata-load.ts's) are synchronous: 13. inlines them */
const SYNCHRONOUS_ASYNC_FLAGGED = new Set([0x30, 0x33, 0x34, 0x35, 0x36, 0x3d])

/** the largest gas the loop of 13. keeps as a number: a double holds every integer up to it exactly */
const MAX_NUMBER_GAS = BigInt(Number.MAX_SAFE_INTEGER)

async function apply(): Promise<void> {
  const proto = Common.prototype as unknown as { isActivatedEIP(eip: number): boolean }
  proto.isActivatedEIP = function (this: CommonInternals, eip: number): boolean {
    const source = this._activatedEIPsCache
    let flags = this.__eipFlags
    if (flags === undefined || this.__eipSource !== source) {
      // one byte per EIP number up to the highest active one (~8,000 bytes): an index, not a hash
      flags = new Uint8Array(Math.max(0, ...source) + 1)
      for (const active of source) flags[active] = 1
      this.__eipFlags = flags
      this.__eipSource = source
    }
    return flags[eip] === 1
  }
  // asked per call frame and per opcode (`param('callStipendGas')`, `param('stackLimit')`,
  // `gteHardfork(SpuriousDragon)`, ...): `param` converts the cached value to a bigint on every
  // call, `gteHardfork` walks the hardfork table. Answered from tables kept as long as the Common's
  // parameter cache (rebuilt, as a new object, on every hardfork or EIP change) and its hardfork.
  const pproto = Common.prototype as unknown as {
    param(name: string): bigint
    gteHardfork(hardfork: string): boolean
  }
  const stockParam = pproto.param
  pproto.param = function (this: CommonInternals, name: string): bigint {
    let params = this.__params
    if (params === undefined || this.__paramsSource !== this._paramsCache) {
      params = new Map()
      this.__params = params
      this.__paramsSource = this._paramsCache
    }
    let value = params.get(name)
    if (value === undefined) {
      value = stockParam.call(this, name) // throws for a parameter the Common does not have
      params.set(name, value)
    }
    return value
  }
  const stockGteHardfork = pproto.gteHardfork
  pproto.gteHardfork = function (this: CommonInternals, hardfork: string): boolean {
    const current = this.hardfork()
    let answers = this.__gte
    if (answers === undefined || this.__gteHardfork !== current) {
      answers = new Map()
      this.__gte = answers
      this.__gteHardfork = current
    }
    let answer = answers.get(hardfork)
    if (answer === undefined) {
      answer = stockGteHardfork.call(this, hardfork)
      answers.set(hardfork, answer)
    }
    return answer
  }
  // every Interpreter asks, every frame: a walk over the hardfork table, answered once per hardfork
  const cproto = Common.prototype as unknown as { consensusType(): string }
  const stockConsensusType = cproto.consensusType
  cproto.consensusType = function (this: CommonInternals): string {
    const hardfork = this.hardfork()
    if (this.__consensusHardfork !== hardfork || this.__consensusType === undefined) {
      this.__consensusType = stockConsensusType.call(this)
      this.__consensusHardfork = hardfork
    }
    return this.__consensusType
  }

  // The Interpreter class is not exported; load the very module the EVM uses (same file URL).
  const evmEntry = import.meta.resolve('@ethereumjs/evm')
  const mod = (await import(new URL('./interpreter.js', evmEntry).href)) as {
    Interpreter: { prototype: InterpreterLike }
  }
  const iproto = mod.Interpreter.prototype as RunnableInterpreter
  const stockAnalysis = iproto._getValidJumpDestinations
  const stockRunStep = iproto.runStep
  const stockRun = iproto.run
  const { EVMError, EVMErrorTypeString } = (await import(new URL('./errors.js', evmEntry).href)) as EvmErrorModule
  const STOP = EVMError.errorMessages.STOP
  const OUT_OF_GAS = EVMError.errorMessages.OUT_OF_GAS
  const opcodeUtil = (await import(new URL('./opcodes/util.js', evmEntry).href)) as Pick<CopyInternals, 'createAddressFromStackBigInt'>
  stockHandlers = ((await import(new URL('./opcodes/functions.js', evmEntry).href)) as { handlers: Map<number, unknown> }).handlers
  stockGasHandlers = ((await import(new URL('./opcodes/gas.js', evmEntry).href)) as { dynamicGasHandlers: Map<number, unknown> }).dynamicGasHandlers
  const stockReturn = stockHandlers.get(0xf3)
  const eofUtil = (await import(new URL('./eof/util.js', evmEntry).href)) as Pick<CopyInternals, 'isEOF' | 'EOFBYTES'>
  copies = copyHandlers({ createAddressFromStackBigInt: opcodeUtil.createAddressFromStackBigInt, isEOF: eofUtil.isEOF, EOFBYTES: eofUtil.EOFBYTES })
  codeSize = codeSizeHandler(eofUtil)
  const evmModule = (await import(new URL('./evm.js', evmEntry).href)) as Pick<FramePatchModules, 'EVM' | 'defaultBlock'>
  const { Journal } = (await import(new URL('./journal.js', evmEntry).href)) as { Journal: FramePatchModules['Journal'] & AddressPatchModules['Journal'] & StorageJournalModule['Journal'] }
  const { Memory } = (await import(new URL('./memory.js', evmEntry).href)) as { Memory: { prototype: PatchedMemory & { write: typeof writeMemory } } }
  const { Stack } = (await import(new URL('./stack.js', evmEntry).href)) as Pick<FramePatchModules, 'Stack'>
  const { Message } = (await import(new URL('./message.js', evmEntry).href)) as Pick<FramePatchModules, 'Message'>
  patchFrames({ ...evmModule, Journal, Interpreter: mod.Interpreter as unknown as FramePatchModules['Interpreter'], Message, Memory, Stack, EVMError, errorMessages: EVMError.errorMessages })
  patchAddresses({ Address, Journal, EVM: evmModule.EVM as unknown as AddressPatchModules['EVM'] })
  patchStorageJournal({ Journal })
  const { trap } = (await import(new URL('./opcodes/util.js', evmEntry).href)) as Pick<StorageInternals, 'trap'>
  storage = { trap, errorMessages: EVMError.errorMessages }
  const { callFamilyGas } = (await import(new URL('./opcodes/EIP7928.js', evmEntry).href)) as Pick<CallInternals, 'callFamilyGas'>
  const { getAddressAccessCost, warmAddress } = (await import(new URL('./opcodes/EIP2929.js', evmEntry).href)) as Pick<CallInternals, 'getAddressAccessCost' | 'warmAddress'>
  calls = callHandlers({ callFamilyGas, getAddressAccessCost, warmAddress, trap, errorMessages: EVMError.errorMessages })
  Memory.prototype.extend = extendMemory
  Memory.prototype.write = writeMemory
  const syncGasHandlers = await loadSyncGasHandlers()
  const syncGas: Array<SyncGasHandler | undefined> = Array.from({ length: 256 }, (_, op) => syncGasHandlers.get(op))

  /** What the fast step needs of the frame: nothing that watches or witnesses single steps. */
  const frameAllowsFastSteps = (self: InterpreterLike): boolean =>
    !self._evm.DEBUG &&
    self.profilerOpts?.enabled !== true &&
    self._evm.events.listenerCount('step') === 0 &&
    !self.common.isActivatedEIP(6800) &&
    !self.common.isActivatedEIP(7864)

  /** One step as the stock step runs it when the frame allows fast steps (see 3.), or STOCK. */
  const fastStep = (self: InterpreterLike, entry: StepEntry): Promise<void> | undefined | typeof STOCK => {
    const info = entry.opcodeInfo
    const rs = self._runState
    let gas = info.feeBigInt
    if (info.dynamicGas) {
      const gasFn = syncGas[info.code]
      if (gasFn === undefined) return STOCK
      if (info.isInvalid || rs.eip7928PostTargetCallOog !== undefined) return STOCK
      gas = gasFn(rs as unknown as GasRunState, gas, self.common as unknown as Common)
    } else if (info.isInvalid || rs.eip7928PostTargetCallOog !== undefined) {
      return STOCK
    }
    self.useGas(gas, info)
    rs.programCounter++
    if (info.isAsync) {
      // a state-reading handler (SLOAD, ...): one promise instead of three, none when it answers at once
      const pending = entry.opHandler(rs, self.common) as unknown as Promise<void> | undefined
      const witness = rs.env.accessWitness
      if (witness === undefined) return pending
      if (pending === undefined) return void witness.commit()
      return pending.then(() => witness.commit())
    }
    entry.opHandler(rs, self.common)
    rs.env.accessWitness?.commit()
    return undefined
  }

  iproto.runStep = function (this: InterpreterLike, entry?: StepEntry): Promise<void> | undefined {
    const opEntry = entry ?? this.lookupOpInfo(this._runState.opCode)
    if (frameAllowsFastSteps(this)) {
      const pending = fastStep(this, opEntry)
      if (pending !== STOCK) return pending
    }
    return stockRunStep.call(this, opEntry)
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
    const fast = frameAllowsFastSteps(this)
    // 13. the opcodes this loop runs itself, and the frame's gas as a number while they run
    // (-1: `rs.gasLeft` holds it)
    const inlineFees = fast ? this._evm[INLINE_FEES] : undefined
    let gasNumber = -1
    // 6. the execution's wall-clock budget: checked as the frame starts and every N steps
    const deadline = executionDeadline(this._evm)
    if (deadline !== undefined) checkFrameStart(deadline)
    let countdown = DEADLINE_CHECK_STEPS
    let err: unknown
    // 18. each step's entry from the opcode table (256 entries) by its code byte
    const opcodeMap = this._evm._opcodeMap
    let doJumpAnalysis = true
    // 13. the memory gas parameters of MLOAD and MSTORE growing memory in the batch
    const batch: InlineBatch =
      inlineFees === undefined
        ? { steps: 0, code: undefined }
        : {
            steps: 0,
            memoryGas: Number(this.common.param('memoryGas')),
            quadCoefficient: Number(this.common.param('quadCoefficientDivGas')),
            keccakWordGas: Number(this.common.param('keccak256WordGas')),
            code: undefined,
          }
    if (inlineFees !== undefined && this._getValidJumpDestinations === sharedJumpAnalysis) {
      // 17. a code analysed before (by an earlier frame) has its analysis from the first step on
      const known = analysedAlready(this.common as unknown as CommonInternals, rs.code)
      if (known !== undefined) {
        adoptAnalysis(rs, batch, known)
        doJumpAnalysis = false
      }
    }
    while (rs.programCounter < rs.code.length) {
      if (deadline !== undefined && --countdown === 0) {
        countdown = DEADLINE_CHECK_STEPS
        checkDeadline(deadline)
      }
      if (inlineFees !== undefined && !doJumpAnalysis && inlineFees[rs.code[rs.programCounter]] !== 0 && rs.eip7928PostTargetCallOog === undefined) {
        // the code byte is the opcode (the jump analysis maps each byte to its table entry): the
        // inlined opcodes from here on run in one batch, at most up to the next deadline check
        if (gasNumber < 0 && rs.gasLeft <= MAX_NUMBER_GAS) gasNumber = Number(rs.gasLeft)
        if (gasNumber >= 0) {
          gasNumber = runInlineSteps(rs as unknown as InlineRunState, inlineFees, gasNumber, deadline === undefined ? Number.MAX_SAFE_INTEGER : countdown, batch)
          if (batch.steps > 0) {
            // this turn's decrement counted the batch's first step
            countdown -= batch.steps - 1
            continue
          }
        }
      }
      const programCounter = rs.programCounter
      let opCode: number
      let opCodeObj: StepEntry | undefined
      if (doJumpAnalysis) {
        opCode = rs.code[programCounter]
        // the analysis runs once the code is seen to jump (JUMP, JUMPI, MCOPY as in the stock loop)
        if (opCode === 0x56 || opCode === 0x57 || opCode === 0x5e) {
          adoptAnalysis(rs, batch, this._getValidJumpDestinations(rs.code))
          doJumpAnalysis = false
        }
      } else {
        opCodeObj = opcodeMap[rs.code[programCounter]]
        opCode = opCodeObj.opcodeInfo.code
      }
      rs.opCode = opCode
      if (gasNumber >= 0 && (opCode === 0x00 || opCodeObj === undefined)) {
        rs.gasLeft = BigInt(gasNumber)
        gasNumber = -1
      }
      if (opCode === 0x00 && fast && rs.eip7928PostTargetCallOog === undefined) {
        // 9. STOP: the stock step charges its fee (0) and advances the pc, then its handler throws
        // a STOP error for this loop to catch and end the frame without error; here the frame ends
        const stop = opCodeObj ?? this.lookupOpInfo(opCode)
        this.useGas(stop.opcodeInfo.feeBigInt, stop.opcodeInfo)
        rs.programCounter++
        break
      }
      try {
        if (gasNumber >= 0) {
          // 13. a synchronous step that neither reads nor writes the frame's gas itself (not GAS, no
          // call or creation, which are asynchronous) keeps the gas a number: the step as fastStep
          // runs it, its fee or its synchronous dynamic gas taken from the number
          const entry = opCodeObj!
          const info = entry.opcodeInfo
          if (!info.isAsync && !info.isInvalid && opCode !== 0x5a && rs.eip7928PostTargetCallOog === undefined) {
            const gasFn = info.dynamicGas ? syncGas[opCode] : undefined
            if (!info.dynamicGas || gasFn !== undefined) {
              let cost = info.fee
              if (gasFn !== undefined) {
                const dynamic = gasFn(rs as unknown as GasRunState, info.feeBigInt, this.common as unknown as Common)
                if (dynamic > gasNumber) {
                  // out of gas, as the stock step's useGas says it (the gas function has run: not again)
                  rs.gasLeft = BigInt(gasNumber)
                  gasNumber = -1
                  this.useGas(dynamic, info)
                }
                cost = Number(dynamic)
              }
              if (cost <= gasNumber) {
                gasNumber -= cost
                rs.programCounter++
                if (opCode === 0xf3 && entry.opHandler === stockReturn) {
                  // 15. RETURN: the stock handler's effect without its STOP throw, which this loop
                  // would catch to end the frame without error (the witness reverted as it does)
                  const [offset, length] = (rs.stack as unknown as { popN(n: number): bigint[] }).popN(2)
                  this._result.returnValue = length === 0n ? new Uint8Array(0) : rs.memory.read(Number(offset), Number(length))
                  rs.env.accessWitness?.revert()
                  break
                }
                entry.opHandler(rs, this.common)
                rs.env.accessWitness?.commit()
                continue
              }
            }
          }
          // every other step, and the stock step of an opcode that fails, sees the gas where the stock loop keeps it
          rs.gasLeft = BigInt(gasNumber)
          gasNumber = -1
        }
        let pending = fast ? fastStep(this, opCodeObj ?? this.lookupOpInfo(opCode)) : STOCK
        if (pending === STOCK) pending = stockRunStep.call(this, opCodeObj)
        if (pending !== undefined) await pending
      } catch (e) {
        rs.env.accessWitness?.revert()
        // as the stock loop: a non-VM error is a bug or a failed state read, rethrown
        if (!('errorType' in (e as object) && (e as { errorType: unknown }).errorType === EVMErrorTypeString)) throw e
        if ((e as { error: unknown }).error !== STOP) err = e
        break
      }
    }
    // the frame ended on a numeric-gas step (a RETURN or REVERT, a halt, or the end of the code):
    // its result reads the gas left from the run state
    if (gasNumber >= 0) rs.gasLeft = BigInt(gasNumber)
    if (err === undefined && rs.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && rs.gasLeft > 0n) {
      rs.gasLeft = 0n
      err = new EVMError(OUT_OF_GAS)
    }
    // 8. nothing reads a frame's memory once it has run (its return data is a copy)
    releaseFrameMemory(rs.memory)
    return { runState: rs, exceptionError: err }
  }

  // 10. CALLER's word kept on the caller's Address (the stock: bytesToBigInt through hex each time)
  ;(iproto as unknown as { getCaller(): bigint }).getCaller = function (this: { _env: { caller: AddressWithBytes } }): bigint {
    return addressWord(this._env.caller)
  }

  sharedJumpAnalysis = function (this: InterpreterLike, code: Uint8Array): JumpAnalysis {
    const common = this.common
    return sharedAnalysis(common as unknown as CommonInternals, code, () => {
      // the stock tables, when the stock loop or step reads them, as this EVM's stock analysis makes them
      const opcodeMap = this._evm._opcodeMap
      const lookup = { common, lookupOpInfo: (op: number) => opcodeMap[op] }
      const stock = (bytes: Uint8Array) => stockAnalysis.call(lookup as unknown as InterpreterLike, bytes)
      if (common.isActivatedEIP(8024)) {
        // 13. the stock walk also skips EIP-8024 immediates: the batch's tables from its results
        const { jumps, pushes } = stock(code)
        return withLazyStockTables({ jumps, inline: inlineAnalysis(code, jumps, pushes) }, code, stock)
      }
      // 13. the jump table and the code as instructions for the inline batch, without the stock tables
      return withLazyStockTables(legacyCodeAnalysis(code), code, stock)
    })
  }
  iproto._getValidJumpDestinations = sharedJumpAnalysis
}

interface OpcodeEntry {
  opHandler: (runState: never, common: never) => void | Promise<void>
  gasHandler?: (runState: never, gas: bigint, common: never) => Promise<bigint> | bigint
}

/** the stock opcode handlers (@ethereumjs/evm opcodes/functions.js), loaded once: 13. inlines an opcode only where the EVM has its stock handler */
let stockHandlers: Map<number, unknown> | undefined
/** the stock dynamic gas handlers (opcodes/gas.js): 13. inlines MLOAD and MSTORE only over these */
let stockGasHandlers: Map<number, unknown> | undefined

/** what SLOAD and SSTORE of 11. use of the EVM's internals, loaded once */
let storage: StorageInternals | undefined

/** CALL's and STATICCALL's handlers of 16., built once the EVM's internals are loaded */
let calls: CallHandlers | undefined

/** the copy opcodes' handlers of 7., built once the EVM's internals are loaded */
let copies: Map<number, (runState: CopyRunState) => void | Promise<void>> | undefined

/** EXTCODESIZE's handler of 19., built once the EVM's internals are loaded */
let codeSize: ((runState: CodeSizeRunState) => Promise<void>) | undefined

const RESOLVED = Promise.resolve()

interface EmittingEvm {
  events?: { listenerCount(topic: string): number }
  _emit?: (topic: string, data: unknown) => Promise<void>
}

/** Per-EVM patches (opcode handlers live in each EVM's opcode map; `_emit` is made per EVM). */
export function patchEvmInstance(evm: object): void {
  const emitting = evm as EmittingEvm
  const stockEmit = emitting._emit
  const events = emitting.events
  if (stockEmit !== undefined && events !== undefined) {
    // 9. what the stock `_emit` does with no listener (nothing), without an async function
    emitting._emit = (topic, data) => (events.listenerCount(topic) === 0 ? RESOLVED : stockEmit(topic, data))
  }
  const map = (evm as { _opcodeMap?: OpcodeEntry[] })._opcodeMap
  if (map === undefined) return
  const replace = (op: number, handler: OpcodeEntry['opHandler']) => {
    if (map[op] !== undefined) map[op].opHandler = handler
  }
  replace(0x20, keccakOpcode as OpcodeEntry['opHandler'])
  replace(0x35, calldataLoad as OpcodeEntry['opHandler'])
  for (let op = 0xa0; op <= 0xa4; op++) replace(op, logOpcode as OpcodeEntry['opHandler'])
  replace(0x51, mload)
  replace(0x52, mstore)
  for (const [op, handler] of copies ?? []) replace(op, handler)
  // 14. TLOAD and TSTORE over this EVM's own entries, which they fall back to
  // (before 13.: the batch runs TLOAD where this EVM has its handler)
  let tload: OpcodeEntry['opHandler'] | undefined
  if (map[0x5c] !== undefined && map[0x5d] !== undefined) {
    type TransientHandler = (runState: TransientRunState, common: unknown) => void
    const entries = map as unknown as Array<{ opHandler: TransientHandler }>
    const transient = transientStorageHandlers({ tload: entries[0x5c].opHandler, tstore: entries[0x5d].opHandler })
    entries[0x5c].opHandler = transient.tload
    entries[0x5d].opHandler = transient.tstore
    tload = transient.tload as OpcodeEntry['opHandler']
  }
  // 13. an opcode is run by the loop only where this EVM has the stock handler and static fee for
  // it (a custom opcode or an opcode the hardfork does not have keeps its own entry); CALLDATALOAD,
  // MLOAD, MSTORE, KECCAK256 and TLOAD where it has the handlers installed above, and MLOAD's,
  // MSTORE's and KECCAK256's stock gas handlers (whose charges the batch makes: sync-gas.ts's)
  const fees = new Uint8Array(256)
  const ownHandlers = new Map<number, unknown>([[0x35, calldataLoad], [0x51, mload], [0x52, mstore], [0x20, keccakOpcode]])
  if (tload !== undefined) ownHandlers.set(0x5c, tload)
  const inlinable = (op: number, entry: (OpcodeEntry & { opcodeInfo?: Partial<OpInfo> }) | undefined): boolean => {
    const info = entry?.opcodeInfo
    // ethereumjs' table calls ADDRESS, CALLER, CALLVALUE, CALLDATALOAD, CALLDATASIZE and RETURNDATASIZE
    // asynchronous ("closure state"), but their handlers (the stock ones, calldata-load.ts) return nothing
    if (entry === undefined || info?.isInvalid !== false || (info.isAsync !== false && !SYNCHRONOUS_ASYNC_FLAGGED.has(op)) || info.code !== op || typeof info.fee !== 'number' || info.fee <= 0 || info.fee >= 256) return false
    const own = ownHandlers.get(op)
    if (own === undefined) return stockHandlers?.get(op) !== undefined && entry.opHandler === stockHandlers.get(op) && info.dynamicGas === false
    if (entry.opHandler !== own) return false
    return op === 0x35 || op === 0x5c ? info.dynamicGas === false : info.dynamicGas === true && entry.gasHandler !== undefined && entry.gasHandler === stockGasHandlers?.get(op)
  }
  for (const op of [...INLINE_OPCODES, ...INLINE_OWN_HANDLER_OPCODES, ...INLINE_STATE_OPCODES]) {
    const entry = map[op] as (OpcodeEntry & { opcodeInfo?: Partial<OpInfo> }) | undefined
    if (inlinable(op, entry)) fees[op] = entry!.opcodeInfo!.fee!
  }
  ;(evm as { [INLINE_FEES]?: Uint8Array })[INLINE_FEES] = fees
  // 11. over this EVM's own SLOAD and SSTORE entries, which they fall back to
  if (storage !== undefined && map[0x54] !== undefined && map[0x55]?.gasHandler !== undefined) {
    const stock = map as unknown as Array<{ opHandler: StorageHandlers['sload']; gasHandler: StorageHandlers['sstoreGas'] }>
    const slots = storageHandlers(storage, { sload: stock[0x54].opHandler, sstore: stock[0x55].opHandler, sstoreGas: stock[0x55].gasHandler })
    stock[0x54].opHandler = slots.sload
    stock[0x55].opHandler = slots.sstore
    stock[0x55].gasHandler = slots.sstoreGas
  }
  // 16. CALL and STATICCALL where this EVM has the stock handlers and gas handlers for them
  if (calls !== undefined) {
    const entries = map as unknown as Array<{ opHandler: unknown; gasHandler?: unknown } | undefined>
    const replaceCall = (op: number, opHandler: unknown, gasHandler: unknown) => {
      const entry = entries[op]
      if (entry === undefined || entry.opHandler !== stockHandlers?.get(op) || entry.gasHandler === undefined || entry.gasHandler !== stockGasHandlers?.get(op)) return
      entry.opHandler = opHandler
      entry.gasHandler = gasHandler
    }
    replaceCall(0xf1, calls.call, calls.callGas)
    replaceCall(0xfa, calls.staticCall, calls.staticCallGas)
  }
  // 19. EXTCODESIZE where this EVM has the stock handler for it
  if (codeSize !== undefined && map[0x3b] !== undefined && map[0x3b].opHandler === stockHandlers?.get(0x3b)) {
    map[0x3b].opHandler = codeSize as OpcodeEntry['opHandler']
  }
}
