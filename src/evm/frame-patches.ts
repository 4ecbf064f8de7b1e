/**
 * The cost of a call frame in the stock EVM (`@ethereumjs/evm` 10.1.3 evm.js, journal.js), patched
 * without changing semantics. Applied by applyInterpreterPatches (interpreter-patches.ts 8.).
 * Measured with a contract that calls, in a loop, a contract that only STOPs: 108 us a call with
 * the stock functions, 26 us with the first of these; with all of them and address-patches.ts,
 * QuadraticComplexitySolidity_CallDataCopy spends ~12 us per call, the caller's loop included
 * (the rest: ~35 promises and ~20 KB of allocation a call).
 *
 * - `EVM.runInterpreter` ends every frame by building a snapshot of it for its result,
 *   `runState: { ...runState, ...result, ...env }`, and `EVM._executeCall` hands it the message as
 *   `{ ...{ codeAddress }, ...message, gasLimit }`. On Node 20's V8 a spread into an object
 *   literal that already has properties (or properties after a spread) takes the generic runtime
 *   path: ~45 and ~20 us a frame. Nothing reads the snapshot (not the EVM, not runTx, not this
 *   project). Here `runInterpreter` is the stock function line for line (as `runFrame`), except
 *   that its result is a FrameResult, whose `runState` is built when first read (an accessor on
 *   the class that replaces itself with the stock snapshot), and an empty return value is one
 *   shared empty array; `_executeCall` is the stock function without the
 *   branches of EIPs it leaves to the stock one (2780, 6800, 7708, 7864, 7928: none is active on
 *   the chains served, through Prague), runs the frame with its Message itself and the gas limit
 *   beside it (no second message), with the three stock
 *   async methods it awaits for every frame written inline (`_reduceSenderBalance`,
 *   `_addToBalance`, `_loadCode`: each an async function and a promise a frame), and it hands
 *   `runInterpreter` the callee's account it has just read and written (the stock reads it again,
 *   an identical fresh object).
 * - `Interpreter._baseCall` (every CALL, CALLCODE, DELEGATECALL, STATICCALL) copies the caller's
 *   selfdestruct map and created-address set through the iterator protocol even when they are
 *   empty, as they nearly always are, empties the return data twice and appends the child's
 *   (mostly empty) logs with a concat, a new array of all the frame's logs so far per call: the
 *   stock function without those (and without its EIP-8037 branches, left to the stock one); the
 *   child's logs are pushed onto the frame's own array, as its LOG steps push theirs.
 * - The EVM journal's `putAccount` (twice a frame), `checkpoint` and `commit` are async functions
 *   that return the state manager's promise: each costs a promise, a `then` job and two microtask
 *   turns for nothing. They return that promise themselves here.
 * - The EVM journal pushes an entry of three new collections (warmed addresses, warmed slots,
 *   touched accounts) at every checkpoint and every commit, i.e. twice a frame, kept until the
 *   transaction ends. An entry that is still empty is given the new height instead when that
 *   changes nothing a revert could see (see the conditions below): the entries that hold
 *   something, and where a revert stops, are the stock journal's.
 * - The stock Interpreter constructor gives every frame's memory an 8 KB buffer (`new Memory()`),
 *   used or not, and the buffers the frame grows into come from the pool of memory-patches.ts
 *   anyway: ~2 us a frame, and 8 KB of external memory a frame for the garbage collector (~140 MB
 *   for the 17,000 frames of QuadraticComplexitySolidity_CallDataCopy). `runInterpreter` builds
 *   the Interpreter as its constructor does, field by field, with memory that starts empty
 *   (`emptyMemory`); memory grows on first use exactly as before (Memory.extend). Its code, jump
 *   table and return data start as one shared empty array (NO_BYTES), not three made per frame.
 * - A child frame (CALL, STATICCALL) goes through `Interpreter.call`/`callStatic` and `EVM.runCall`:
 *   the first two are async functions that only build the Message and return `_baseCall`'s
 *   promise, the third awaits `_emit` twice a frame for listeners there are none of. Here the same
 *   Message and promise without the layer, and `runCall` for a child message without the awaits
 *   (its other branches left to the stock function).
 * - The stock child frame is a chain of async functions, each awaiting the next (`runCall`,
 *   `_executeCall`, `runInterpreter`), and awaits every journal write and account read. Here
 *   `_baseCall` runs it as one async function (callFrame) that awaits only what can suspend: an
 *   account JournaledState does not hold (accountNowOrLater), a code read, the interpreter's run;
 *   a journal write, checkpoint or commit JournaledState has already done (isSettled) is not
 *   awaited. Its Interpreter takes the message's selfdestruct map (the stock makes one and
 *   replaces it at once).
 * Measured with scripts/probe/frame-cost.ts (a loop of STATICCALLs into a contract that returns a
 * word) and with these and call-opcodes.ts's return-data write switched in process: see
 * BENCHMARKS.md, h17-frames and h18-frames.
 */
import { Hardfork } from '@ethereumjs/common'
import { Account, Address, EthereumJSErrorWithoutCode, MAX_INTEGER, createZeroAddress } from '@ethereumjs/util'
import { accountNowOrLater, isSettled } from './journaled-state.ts'
import { emptyMemory } from './memory-patches.ts'

interface FrameMessage {
  to?: Address
  caller?: Address
  data?: Uint8Array
  value?: bigint
  code?: unknown
  isStatic?: boolean
  isCreate?: boolean
  depth?: number
  codeAddress?: Address
  gasRefund?: bigint
  chargeCodeAccesses?: boolean
  blobVersionedHashes?: Uint8Array[]
  accessWitness?: { commit(): void }
  createdAddresses?: Set<string>
  selfdestruct?: Map<string, unknown>
  gasLimit: bigint
  /** from `_executeCall` below: the callee's account as it has just read and written it (the stock reads it again) */
  contract?: Account
}

interface FrameRunState {
  gasLeft: bigint
  gasRefund: bigint
  stateGasSpilled?: bigint
}

interface FrameInterpreter {
  _result: { returnValue?: Uint8Array; selfdestruct: Map<string, unknown>; createdAddresses?: Set<string>; logs: unknown[] }
  _env: object
  run(code: unknown, opts: object): Promise<{ runState: FrameRunState; exceptionError?: { error: string } }>
}

interface EvmLike {
  stateManager: { getAccount(address: Address): Promise<Account | undefined> }
  blockchain: unknown
  journal: unknown
  performanceLogger: unknown
  _optsCached: { profiler?: unknown }
  _tx: { gasPrice: bigint; origin?: Address }
  _block?: unknown
}

interface CallMessage extends FrameMessage {
  caller: Address
  to: Address
  value: bigint
  delegatecall: boolean
  isCompiled?: boolean
  code?: unknown
  depth: number
}

/** What `Interpreter.call` and `callStatic` give the stock Message constructor. */
interface MessageOptions {
  caller: Address
  gasLimit: bigint
  to: Address
  value: bigint
  data: Uint8Array
  isStatic: boolean
  depth: number
  blobVersionedHashes?: Uint8Array[]
  accessWitness?: { commit(): void }
}

/** The frame that opens a child frame by CALL or STATICCALL. */
interface CallOpeningInterpreter {
  _env: { address: Address; isStatic: boolean; depth: number; blobVersionedHashes?: Uint8Array[]; accessWitness?: { commit(): void } }
  _baseCall(msg: ChildMessage): Promise<bigint>
}

/** A child frame's message as `EVM.runCall` reads it. */
interface RunMessage {
  to?: Address
  depth: number
  accessWitness?: { commit(): void }
}

interface RunResults {
  execResult: { exceptionError?: { error: string }; selfdestruct?: Map<string, unknown>; createdAddresses?: Set<string>; gasRefund?: bigint; logs?: unknown[] }
}

interface MessageRunningEvm {
  DEBUG: boolean
  common: { isActivatedEIP(eip: number): boolean; hardfork(): string }
  _optsCached: { profiler?: { enabled?: boolean } }
  events: { listenerCount(topic: string): number }
  _emit(topic: string, data: unknown): Promise<void>
  journal: { checkpoint(): Promise<void>; commit(): Promise<void>; revert(): Promise<void> }
  transientStorage: { checkpoint(): void; commit(): void; revert(): void }
  _executeCall(message: RunMessage): Promise<RunResults>
  runCall(opts: { message: ChildMessage }): Promise<ChildResults>
}

/** What `Interpreter._baseCall` is given: the message `call`, `callCode`, `callStatic` or `callDelegate` built. */
interface ChildMessage {
  selfdestruct?: Map<string, unknown>
  createdAddresses?: Set<string>
  gasRefund?: bigint
  delegatecall?: boolean
  value: bigint
}

/** What a call frame answers (`execResult`): a FrameResult, a precompile's result or an early exit's. */
interface FrameExecResult {
  logs?: unknown[]
  executionGasUsed: bigint
  returnValue?: Uint8Array
  exceptionError?: { error: string }
  gasRefund?: bigint
  selfdestruct?: Map<string, unknown>
  createdAddresses?: Set<string>
}

interface ChildResults {
  execResult: FrameExecResult
}

interface CallingInterpreter {
  common: { isActivatedEIP(eip: number): boolean; param(name: string): bigint }
  _result: { selfdestruct: Map<string, unknown>; createdAddresses?: Set<string>; logs: unknown[] }
  _runState: { gasRefund: bigint; returnBytes: Uint8Array }
  _env: { depth: number; address: Address; contract: Account }
  _evm: FrameEvm
  _stateManager: { getAccount(address: Address): Promise<Account | undefined> }
  useGas(amount: bigint, context: string): void
  _getReturnCode(results: ChildResults): bigint
}

/** The EIP-7702 delegation designator (`@ethereumjs/evm` types.js DELEGATION_7702_FLAG) starts the code. */
const isDelegation = (code: Uint8Array): boolean => code.length >= 3 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00

interface CallingEvm extends EvmLike {
  DEBUG: boolean
  common: { isActivatedEIP(eip: number): boolean; consensusType(): string }
  _optsCached: { profiler?: { enabled?: boolean }; cliqueSigner?: unknown }
  stateManager: EvmLike['stateManager'] & { getCode(address: Address): Promise<Uint8Array> }
  journal: { putAccount(address: Address, account: Account): Promise<void>; addAlwaysWarmAddress(address: string): void }
  getPrecompile(address: Address): unknown
  runPrecompile(code: unknown, data: Uint8Array | undefined, gasLimit: bigint): Promise<FrameExecResult>
  runInterpreter(message: object, opts: object): Promise<{ executionGasUsed: bigint }>
  postMessageCleanup(): void
}

/** The EVM as a call frame (callFrame) uses it: `_executeCall`'s needs and `runCall`'s. */
type FrameEvm = CallingEvm & MessageRunningEvm & ConstructingEvm

const runStateData = (value: unknown): PropertyDescriptor => ({ value, configurable: true, enumerable: true, writable: true })

/**
 * A frame's result, the stock `{ ...result, runState: { ...runState, ...result, ...env },
 * exceptionError, gas, executionGasUsed, gasRefund, stateGasSpilled }` with the same fields, except
 * that `runState` (the snapshot nothing in ethereumjs or here reads) is built when first read, by
 * an accessor on the class, not on each result: then a data property as in the stock result. What
 * it is built from is kept in private fields (invisible to enumeration and comparison). Before,
 * each result was a literal with a symbol-keyed object of those three and an
 * `Object.defineProperty` of the accessor: the hottest line of `runInterpreter` in the frame probe
 * (scripts/probe/frame-cost.ts), and an object more per frame. (A getter made per result, a
 * closure, had given each result its own hidden class, allocated in the old generation, holding
 * the whole frame: see BENCHMARKS.md h16/h17.)
 */
class FrameResult {
  logs: unknown[]
  returnValue: Uint8Array
  selfdestruct: Map<string, unknown>
  createdAddresses: Set<string> | undefined
  exceptionError: { error: string } | undefined
  gas: bigint
  executionGasUsed: bigint
  gasRefund: bigint
  stateGasSpilled: bigint | undefined
  readonly #runState: object
  readonly #result: object
  readonly #env: object

  constructor(result: FrameInterpreter['_result'], returnValue: Uint8Array, interpreterRes: { runState: FrameRunState; exceptionError?: { error: string } }, gasUsed: bigint, env: object) {
    this.logs = result.logs
    this.returnValue = returnValue
    this.selfdestruct = result.selfdestruct
    this.createdAddresses = result.createdAddresses
    this.exceptionError = interpreterRes.exceptionError
    this.gas = interpreterRes.runState.gasLeft
    this.executionGasUsed = gasUsed
    this.gasRefund = interpreterRes.runState.gasRefund
    this.stateGasSpilled = interpreterRes.runState.stateGasSpilled
    this.#runState = interpreterRes.runState
    this.#result = result
    this.#env = env
  }

  get runState(): object {
    const runState = { ...this.#runState, ...this.#result, ...this.#env }
    Object.defineProperty(this, 'runState', runStateData(runState))
    return runState
  }

  set runState(value: unknown) {
    Object.defineProperty(this, 'runState', runStateData(value))
  }
}

/** EIPs whose branches of `_executeCall` the plain path leaves out: a chain with any goes to the stock function. */
const STOCK_CALL_EIPS = [2780, 6800, 7708, 7864, 7928]

/** EIPs whose branches of `_executeCall` or `runCall` a child frame's path leaves out (those above, state gas). */
const STOCK_FRAME_EIPS = [...STOCK_CALL_EIPS, 8037]

/** Whether any of `eips` is active: a loop, not `some` with a closure made per frame. */
function anyActivated(common: { isActivatedEIP(eip: number): boolean }, eips: readonly number[]): boolean {
  for (const eip of eips) if (common.isActivatedEIP(eip)) return true
  return false
}

/** Whether `evm` takes a branch the patched frame functions leave to the stock ones: debug, the profiler, or one of `eips`. */
function takesStockBranch(evm: { DEBUG: boolean; _optsCached: { profiler?: { enabled?: boolean } }; common: { isActivatedEIP(eip: number): boolean } }, eips: readonly number[]): boolean {
  return evm.DEBUG || evm._optsCached.profiler?.enabled === true || anyActivated(evm.common, eips)
}

/** One entry of the stock Journal's `journalDiff`: a height, and what was warmed and touched at it. */
type JournalDiffEntry = [number, [Set<string>, Map<string, Set<string>>, Set<string>]]

interface JournalLike {
  journalHeight: number
  journalDiff: JournalDiffEntry[]
  stateManager: { checkpoint(): Promise<void>; commit(): Promise<void>; putAccount(address: Address, account: Account | undefined): Promise<void> }
  touchAddress(address: Address): void
}

const isEmptyDiff = (entry: JournalDiffEntry): boolean => entry[1][0].size === 0 && entry[1][1].size === 0 && entry[1][2].size === 0

export interface FramePatchModules {
  EVM: { prototype: { runInterpreter: unknown; _executeCall: unknown; runCall: unknown } }
  Journal: { prototype: { checkpoint: unknown; commit: unknown; putAccount: unknown } }
  defaultBlock(): unknown
  Interpreter: { prototype: { _baseCall: unknown; call: unknown; callStatic: unknown } }
  Message: new (opts: MessageOptions) => ChildMessage
  Memory: { prototype: object }
  Stack: new () => unknown
  EVMError: new (error: string) => unknown
  errorMessages: Record<string, string>
}

interface ConstructingEvm extends EvmLike {
  common: { consensusType(): string }
  _optsCached: { profiler?: unknown; cliqueSigner?: unknown }
}

interface FrameEnv {
  gasRefund?: bigint
  initialLogs?: unknown[]
}

/**
 * The empty byte arrays every frame starts with (its code and jump table until `run` sets them,
 * its return data until a call or creation returns some): shared, not made per frame. A
 * zero-length array has no element to write, and each field is only ever replaced, never written
 * into; `Uint8Array.from([])` (the stock table) walks the iterator protocol. In the frame probe
 * (scripts/probe/frame-cost.ts) the three allocations were ~5% of a call's CPU.
 */
const NO_BYTES = new Uint8Array(0)

/** What `_executeCall` hands the interpreter's `run` for every frame (the stock: a new `{ initialLogs: undefined }`; `run` only reads it). */
const CHILD_RUN_OPTS: { readonly initialLogs?: unknown[] } = Object.freeze({ initialLogs: undefined })

/**
 * `new Interpreter(evm, stateManager, blockchain, env, gasLeft, journal, performanceLogs,
 * profilerOpts)` of `@ethereumjs/evm` 10.1.3 interpreter.js, the same fields in the same order,
 * except that the memory has no buffer yet (see the module comment) and the empty byte arrays are
 * one shared NO_BYTES.
 */
function constructInterpreter(
  classes: Pick<FramePatchModules, 'Interpreter' | 'Memory' | 'Stack'>,
  evm: ConstructingEvm,
  env: FrameEnv,
  gasLeft: bigint,
  selfdestruct: Map<string, unknown> | undefined,
): FrameInterpreter {
  const self = Object.create(classes.Interpreter.prototype) as Record<string, unknown>
  self.opDebuggers = {}
  self._evm = evm
  self._stateManager = evm.stateManager
  self.common = evm.common
  if (evm.common.consensusType() === 'poa' && evm._optsCached.cliqueSigner === undefined) {
    throw EthereumJSErrorWithoutCode('Must include cliqueSigner function if clique/poa is being used for consensus type')
  }
  self._runState = {
    programCounter: 0,
    opCode: 0xfe, // INVALID opcode
    memory: emptyMemory(classes.Memory),
    memoryWordCount: 0n,
    highestMemCost: 0n,
    stack: new classes.Stack(),
    code: NO_BYTES,
    validJumps: NO_BYTES,
    cachedPushes: {},
    stateManager: evm.stateManager,
    blockchain: evm.blockchain,
    env,
    shouldDoJumpAnalysis: true,
    interpreter: self,
    gasRefund: env.gasRefund,
    gasLeft,
    stateGasSpilled: 0n,
    returnBytes: NO_BYTES,
  }
  self.journal = evm.journal
  self._env = env
  self._result = {
    logs: env.initialLogs ? [...env.initialLogs] : [],
    returnValue: undefined,
    // the message's when it has one (a child frame's, made by `_baseCall`): the stock makes a Map
    // here and replaces it with the message's at once
    selfdestruct: selfdestruct ?? new Map(),
  }
  self.profilerOpts = evm._optsCached.profiler
  self.performanceLogger = evm.performanceLogger
  return self as unknown as FrameInterpreter
}

export function patchFrames({ EVM, Journal, defaultBlock, Interpreter, Message, Memory, Stack, EVMError, errorMessages }: FramePatchModules): void {
  const classes = { Interpreter, Memory, Stack }
  // not async functions: the state manager's promise is the caller's (an async function that
  // returns a promise costs a `then` job and two microtask turns more)
  Journal.prototype.putAccount = function (this: JournalLike, address: Address, account: Account | undefined): Promise<void> {
    this.touchAddress(address)
    return this.stateManager.putAccount(address, account)
  }
  Journal.prototype.checkpoint = function (this: JournalLike): Promise<void> {
    this.journalHeight++
    const diff = this.journalDiff
    const last = diff[diff.length - 1]
    // an empty last entry (at the old height) after one at the old height separates nothing: it
    // takes the new height (a revert of the new level then stops at that predecessor, as at it)
    if (diff.length > 1 && isEmptyDiff(last) && diff[diff.length - 2][0] === this.journalHeight - 1) last[0] = this.journalHeight
    else diff.push([this.journalHeight, [new Set(), new Map(), new Set()]])
    return this.stateManager.checkpoint()
  }
  Journal.prototype.commit = function (this: JournalLike): Promise<void> {
    this.journalHeight--
    const diff = this.journalDiff
    const last = diff[diff.length - 1]
    // an empty entry above the new height separates nothing: it takes the new height
    if (diff.length > 1 && isEmptyDiff(last)) last[0] = this.journalHeight
    else diff.push([this.journalHeight, [new Set(), new Map(), new Set()]])
    return this.stateManager.commit()
  }

  const REVERT = errorMessages.REVERT
  const INSUFFICIENT_BALANCE = errorMessages.INSUFFICIENT_BALANCE
  const VALUE_OVERFLOW = errorMessages.VALUE_OVERFLOW
  const INVALID_EOF_FORMAT = errorMessages.INVALID_EOF_FORMAT
  const CODESTORE_OUT_OF_GAS = errorMessages.CODESTORE_OUT_OF_GAS

  /**
   * The first half of the stock `runInterpreter(message, opts)` for `message` run with `gasLimit`
   * in `contract`: its Interpreter, ready to run. Synchronous: nothing in it waits on state.
   */
  function startFrame(evm: ConstructingEvm, message: FrameMessage, gasLimit: bigint, contract: Account, opts: { initialLogs?: unknown[] }): FrameInterpreter {
    const env = {
      address: message.to ?? createZeroAddress(),
      caller: message.caller ?? createZeroAddress(),
      callData: message.data ?? Uint8Array.from([0]),
      callValue: message.value ?? 0n,
      code: message.code,
      isStatic: message.isStatic ?? false,
      isCreate: message.isCreate ?? false,
      depth: message.depth ?? 0,
      gasPrice: evm._tx.gasPrice,
      origin: evm._tx.origin ?? message.caller ?? createZeroAddress(),
      block: evm._block ?? defaultBlock(),
      contract,
      codeAddress: message.codeAddress,
      gasRefund: message.gasRefund,
      chargeCodeAccesses: message.chargeCodeAccesses,
      blobVersionedHashes: message.blobVersionedHashes ?? [],
      accessWitness: message.accessWitness,
      createdAddresses: message.createdAddresses,
      initialLogs: opts.initialLogs,
    }
    const interpreter = constructInterpreter(classes, evm, env, gasLimit, message.selfdestruct)
    if (message.createdAddresses) {
      interpreter._result.createdAddresses = message.createdAddresses
    }
    return interpreter
  }

  /** The second half of the stock `runInterpreter`: the frame's result from what its `run` answered. */
  function endFrame(message: FrameMessage, interpreter: FrameInterpreter, interpreterRes: Awaited<ReturnType<FrameInterpreter['run']>>, gasLimit: bigint): FrameResult {
    let result = interpreter._result
    let gasUsed = gasLimit - interpreterRes.runState.gasLeft
    if (interpreterRes.exceptionError) {
      if (interpreterRes.exceptionError.error !== REVERT && interpreterRes.exceptionError.error !== INVALID_EOF_FORMAT) {
        gasUsed = gasLimit
      }
      // Clear the result on error
      result = { logs: [], returnValue: result.returnValue, selfdestruct: new Map(), createdAddresses: new Set() }
    }
    message.accessWitness?.commit()
    // an empty return value is the shared NO_BYTES (the stock: a new empty array per frame; a
    // zero-length array has nothing to write into)
    return new FrameResult(result, result.returnValue ?? NO_BYTES, interpreterRes, gasUsed, interpreter._env)
  }

  /**
   * The stock `runInterpreter(message, opts)` for `message` run with `gasLimit`, the callee's
   * `contract` when the caller has just read it (else read here, as the stock does). The stock
   * hands `runInterpreter` a copy of the message with the gas limit (`{ ...{ codeAddress },
   * ...message, gasLimit }`, 17 properties); a call frame (callFrame) runs its Message itself.
   */
  async function runFrame(evm: ConstructingEvm, message: FrameMessage, gasLimit: bigint, knownContract: Account | undefined, opts: { initialLogs?: unknown[] }): Promise<FrameResult> {
    const contract = knownContract ?? (await evm.stateManager.getAccount(message.to ?? createZeroAddress())) ?? new Account()
    const interpreter = startFrame(evm, message, gasLimit, contract, opts)
    return endFrame(message, interpreter, await interpreter.run(message.code, opts), gasLimit)
  }

  EVM.prototype.runInterpreter = function (this: ConstructingEvm, message: FrameMessage, opts: { initialLogs?: unknown[] } = {}): Promise<FrameResult> {
    return runFrame(this, message, message.gasLimit, message.contract, opts)
  }

  /**
   * A call frame (not a creation) as one async function: for a child frame (`journaled`) the
   * stock `runCall`'s checkpoint, commit or revert around it, then what the stock `_executeCall`
   * and `runInterpreter` do, each of the three an async function awaiting the next before. Each
   * such layer costs a promise, a suspended function and a reaction per await: h18-frames measured
   * them as most of what the frame functions allocate (~18% of a quote's allocation). Here the
   * frame waits only where state can suspend (an account or code read, the interpreter's run);
   * a journal write or checkpoint that JournaledState has already done (`isSettled`) is not
   * awaited. The order of the state operations is the stock one. `_executeCall`'s part is the
   * stock function without the branches of the EIPs in STOCK_FRAME_EIPS, debug and profiler (the
   * callers check them), the three async methods it awaits (`_reduceSenderBalance`,
   * `_addToBalance`, `_loadCode`) written inline, and the callee's account it has just read and
   * written handed to the interpreter (the stock reads it again, an identical fresh object).
   */
  async function callFrame(evm: FrameEvm, message: CallMessage, journaled: boolean): Promise<FrameExecResult> {
    const transient = journaled && evm.common.isActivatedEIP(1153)
    if (journaled) {
      const checkpoint = evm.journal.checkpoint()
      if (!isSettled(checkpoint)) await checkpoint
      if (transient) evm.transientStorage.checkpoint()
    }
    const gasLimit = message.gasLimit
    const callerRead = accountNowOrLater(evm.stateManager, message.caller)
    const account = (callerRead instanceof Promise ? await callerRead : callerRead) ?? new Account()
    let errorMessage: unknown
    // Reduce tx value from sender (the stock `_reduceSenderBalance`)
    if (!message.delegatecall) {
      try {
        account.balance -= message.value
        if (account.balance < 0n) throw new EVMError(INSUFFICIENT_BALANCE)
        const put = evm.journal.putAccount(message.caller, account)
        if (!isSettled(put)) await put
      } catch (e) {
        errorMessage = e
      }
    }
    // Load `to` account
    const toRead = accountNowOrLater(evm.stateManager, message.to)
    const toAccount = (toRead instanceof Promise ? await toRead : toRead) ?? new Account()
    // Add tx value to the `to` account (the stock `_addToBalance`)
    if (!message.delegatecall) {
      try {
        const newBalance = toAccount.balance + message.value
        if (newBalance > MAX_INTEGER) throw new EVMError(VALUE_OVERFLOW)
        toAccount.balance = newBalance
        // putAccount as the nonce may have changed for contract creation
        const put = evm.journal.putAccount(message.to, toAccount)
        if (!isSettled(put)) await put
      } catch (e) {
        errorMessage = e
      }
    }
    // Load code (the stock `_loadCode`; the EIP-7702 designator compared in place, not sliced)
    if (!message.code) {
      const precompile = evm.getPrecompile(message.codeAddress!)
      if (precompile) {
        message.code = precompile
        message.isCompiled = true
      } else {
        let code = await evm.stateManager.getCode(message.codeAddress!)
        if (evm.common.isActivatedEIP(7702) && isDelegation(code)) {
          const address = new Address(code.slice(3, 24))
          code = await evm.stateManager.getCode(address)
          if (message.depth === 0) evm.journal.addAlwaysWarmAddress(address.toString())
        }
        message.code = code
        message.isCompiled = false
        message.chargeCodeAccesses = true
      }
    }
    let execResult: FrameExecResult
    if (!message.code || (typeof message.code !== 'function' && (message.code as Uint8Array).length === 0) || errorMessage !== undefined) {
      execResult = {
        gasRefund: message.gasRefund,
        executionGasUsed: message.gasLimit - gasLimit,
        exceptionError: errorMessage as FrameExecResult['exceptionError'],
        returnValue: NO_BYTES,
        logs: undefined,
      }
    } else {
      if (message.isCompiled === true) {
        execResult = await evm.runPrecompile(message.code, message.data, gasLimit)
        execResult.gasRefund = message.gasRefund
      } else {
        const interpreter = startFrame(evm, message, gasLimit, toAccount, CHILD_RUN_OPTS)
        execResult = endFrame(message, interpreter, await interpreter.run(message.code, CHILD_RUN_OPTS), gasLimit)
      }
      if (message.depth === 0) {
        evm.postMessageCleanup()
      }
      execResult.executionGasUsed += message.gasLimit - gasLimit
    }
    if (!journaled) return execResult
    // the rest of the stock `runCall`: a failed frame forfeits its refunds, selfdestructs and
    // created addresses (the stock comment: except Frontier's code-store out of gas)
    const err = execResult.exceptionError
    if (err && err.error !== CODESTORE_OUT_OF_GAS) {
      execResult.selfdestruct = new Map()
      execResult.createdAddresses = new Set()
      execResult.gasRefund = 0n
    }
    if (err && !(evm.common.hardfork() === Hardfork.Chainstart && err.error === CODESTORE_OUT_OF_GAS)) {
      execResult.logs = []
      await evm.journal.revert()
      if (transient) evm.transientStorage.revert()
    } else {
      const commit = evm.journal.commit()
      if (!isSettled(commit)) await commit
      if (transient) evm.transientStorage.commit()
    }
    message.accessWitness?.commit()
    return execResult
  }

  /** Whether a child frame of `evm` can run as callFrame: no branch the stock functions keep for themselves, no message listener. */
  const runsAsOneFrame = (evm: FrameEvm): boolean =>
    !takesStockBranch(evm, STOCK_FRAME_EIPS) &&
    evm.events.listenerCount('beforeMessage') === 0 &&
    evm.events.listenerCount('afterMessage') === 0

  const stockBaseCall = Interpreter.prototype._baseCall as (this: CallingInterpreter, msg: ChildMessage) => Promise<bigint>
  Interpreter.prototype._baseCall = async function (this: CallingInterpreter, msg: ChildMessage): Promise<bigint> {
    if (this.common.isActivatedEIP(8037)) return stockBaseCall.call(this, msg)
    // the stock function without its EIP-8037 branches; the parent's sets copied only when they
    // hold something (a Map or Set made from an empty one still walks the iterator protocol),
    // the return data emptied once (the stock: twice; to the shared NO_BYTES), the child's logs appended only when
    // there are some (the stock concatenates an empty array on every call), in place: the array
    // is this frame's own (made with its Interpreter; the LOG opcodes push onto it)
    const parentSelfdestruct = this._result.selfdestruct
    const selfdestruct = parentSelfdestruct.size === 0 ? new Map<string, unknown>() : new Map(parentSelfdestruct)
    msg.selfdestruct = selfdestruct
    msg.gasRefund = this._runState.gasRefund
    this._runState.returnBytes = NO_BYTES
    let createdAddresses: Set<string> | undefined
    if (this.common.isActivatedEIP(6780)) {
      const parentCreated = this._result.createdAddresses
      createdAddresses = parentCreated === undefined || parentCreated.size === 0 ? new Set() : new Set(parentCreated)
      msg.createdAddresses = createdAddresses
    }
    // Check if account has enough ether and max depth not exceeded
    if (this._env.depth >= Number(this.common.param('stackLimit')) || (msg.delegatecall !== true && this._env.contract.balance < msg.value)) {
      return 0n
    }
    // the child frame in one async function (callFrame), or through `runCall` as the stock does
    // where a listener or a stock branch needs it
    const evm = this._evm
    const execResult = runsAsOneFrame(evm) ? await callFrame(evm, msg as CallMessage, true) : (await evm.runCall({ message: msg })).execResult
    const logs = execResult.logs
    if (logs && logs.length > 0) {
      const own = this._result.logs
      for (const log of logs) own.push(log)
    }
    // this should always be safe
    this.useGas(execResult.executionGasUsed, 'CALL, STATICCALL, DELEGATECALL, CALLCODE')
    // Set return value
    if (execResult.returnValue !== undefined && (!execResult.exceptionError || execResult.exceptionError.error === REVERT)) {
      this._runState.returnBytes = execResult.returnValue
    }
    if (!execResult.exceptionError) {
      for (const [addressToSelfdestructHex, beneficiaryHex] of selfdestruct) {
        this._result.selfdestruct.set(addressToSelfdestructHex, beneficiaryHex)
      }
      if (createdAddresses !== undefined) {
        for (const item of createdAddresses) {
          this._result.createdAddresses!.add(item)
        }
      }
      // update stateRoot on current contract
      const read = accountNowOrLater(this._stateManager, this._env.address)
      const account = read instanceof Promise ? await read : read
      if (!account) {
        throw EthereumJSErrorWithoutCode('could not read contract account')
      }
      this._env.contract = account
      this._runState.gasRefund = execResult.gasRefund ?? 0n
    }
    return this._getReturnCode({ execResult })
  }

  const stockExecuteCall = EVM.prototype._executeCall as (this: CallingEvm, message: CallMessage) => Promise<unknown>
  EVM.prototype._executeCall = async function (this: FrameEvm, message: CallMessage) {
    if (takesStockBranch(this, STOCK_CALL_EIPS)) {
      return stockExecuteCall.call(this, message)
    }
    return { execResult: await callFrame(this, message, false) }
  }

  // CALL and STATICCALL open their child frame through `Interpreter.call` / `callStatic`: stock
  // async functions that only build the Message and return `_baseCall`'s promise (an async
  // function returning a promise costs a promise of its own and three microtask turns more).
  // The same Message, the same promise, without the layer.
  Interpreter.prototype.call = function (this: CallOpeningInterpreter, gasLimit: bigint, address: Address, value: bigint, data: Uint8Array): Promise<bigint> {
    const env = this._env
    return this._baseCall(
      new Message({ caller: env.address, gasLimit, to: address, value, data, isStatic: env.isStatic, depth: env.depth + 1, blobVersionedHashes: env.blobVersionedHashes, accessWitness: env.accessWitness }),
    )
  }
  Interpreter.prototype.callStatic = function (this: CallOpeningInterpreter, gasLimit: bigint, address: Address, value: bigint, data: Uint8Array): Promise<bigint> {
    const env = this._env
    return this._baseCall(
      new Message({ caller: env.address, gasLimit, to: address, value, data, isStatic: true, depth: env.depth + 1, blobVersionedHashes: env.blobVersionedHashes, accessWitness: env.accessWitness }),
    )
  }

  // `EVM.runCall` for a child frame (a message with a target, below the top frame) where a
  // listener wants its messages (`_baseCall` runs the others as callFrame itself): the stock
  // function without its top-frame, creation, debug, profiler and the STOCK_FRAME_EIPS branches
  // (all left to the stock one), and without awaiting `_emit` for a topic nobody listens to.
  // Checkpoint, commit or revert, the transient storage and what a failed frame forfeits are the
  // stock ones, in the stock order (callFrame).
  const stockRunCall = EVM.prototype.runCall as (this: FrameEvm, opts: { message?: RunMessage }) => Promise<RunResults>
  EVM.prototype.runCall = async function (this: FrameEvm, opts: { message?: RunMessage }): Promise<RunResults> {
    const message = opts.message
    if (
      message === undefined ||
      message.to === undefined ||
      !(message.depth > 0) ||
      takesStockBranch(this, STOCK_FRAME_EIPS)
    ) {
      return stockRunCall.call(this, opts)
    }
    if (this.events.listenerCount('beforeMessage') !== 0) await this._emit('beforeMessage', message)
    const result = { execResult: await callFrame(this, message as CallMessage, true) }
    if (this.events.listenerCount('afterMessage') !== 0) await this._emit('afterMessage', result)
    return result
  }
}
