/**
 * CALL and STATICCALL (`@ethereumjs/evm` 10.1.3 opcodes/functions.js 0xf1 and 0xfa, their gas
 * handlers in opcodes/gas.js) with the target Address made once from the stack word. Installed per
 * EVM by patchEvmInstance (interpreter-patches.ts 16.) over the stock entries only.
 *
 * What a call cost in the stock handlers besides the call itself (~23 CALLs and STATICCALLs a
 * bench:quote mix execution): the gas handler and the handler each make the target's Address from
 * the stack word by `createAddressFromStackBigInt` (the word to a hex string, the string to bytes,
 * the bytes padded to 20 by a copy), and the Address's hex is made again for the journal, the
 * state and the precompile table; the EIP-7702 check copies the target's first three code bytes
 * to compare them; the return data is copied by `getDataSlice` (a subarray, then padded by
 * another copy) before it is written into memory. Here:
 * - `addressOfWord` writes the word's 20 bytes directly (no hex string), keeps the word on the
 *   Address (address-patches.ts), and answers the same Address again for the same word (the
 *   handler, right after the gas handler): an Address is never changed in place, so sharing one
 *   is safe;
 * - the gas handlers are the stock ones line for line, over the stock `callFamilyGas`, with the
 *   EIP-7702 delegation check reading the code bytes in place;
 * - the handlers are the stock ones line for line, the return data written from itself when it is
 *   all written, else from a subarray of itself (it is never shorter than what is written: the
 *   stock `getDataSlice` pads nothing), and a call without input given one shared empty array.
 * Gas, results, memory and warm addresses are the stock ones: call-opcodes.test.ts compares them
 * with the stock handlers (value calls, static calls, precompiles, empty and delegated targets,
 * short and long return data, dirty high address bits), and the anvil and geth tests check whole
 * executions.
 */
import type { Common } from '@ethereumjs/common'
import { Address } from '@ethereumjs/util'
import { keepAddressWord } from './address-patches.ts'

const MASK_160 = (1n << 160n) - 1n

/**
 * The call data of a call without input: one shared empty array (the stock handlers make one per
 * call, before they know whether there is input: a `new Uint8Array(0)` is an ArrayBuffer and a view,
 * the costliest line of STATICCALL's handler in the frame probe). The callee only reads its call
 * data, and a zero-length array has nothing to write into.
 */
const NO_CALL_DATA: Uint8Array = new Uint8Array(0)

/** where the 20 bytes are written before the Address gets its own copy (a DataView made once) */
const scratch = new Uint8Array(20)
const scratchView = new DataView(scratch.buffer)

/** the last word made into an Address, and that Address (one entry: the gas handler's target, read again by the handler) */
let lastWord = -1n
let lastAddress: Address | undefined

/**
 * The Address of the word's low 160 bits, as the stock `createAddressFromStackBigInt` makes it
 * (~170 ns against its ~690: the bytes written as a 32-bit and two 64-bit big-endian halves, no
 * hex string), the word kept on it for ADDRESS in the callee's frame.
 */
export function addressOfWord(word: bigint): Address {
  const masked = word & MASK_160
  if (masked === lastWord && lastAddress !== undefined) return lastAddress
  scratchView.setUint32(0, Number(masked >> 128n))
  scratchView.setBigUint64(4, BigInt.asUintN(64, masked >> 64n))
  scratchView.setBigUint64(12, BigInt.asUintN(64, masked))
  const address = new Address(scratch.slice())
  keepAddressWord(address, masked)
  lastWord = masked
  lastAddress = address
  return address
}

interface CallStack {
  peek(n: number): bigint[]
  popN(n: number): bigint[]
  push(value: bigint): void
}

export interface CallRunState {
  stack: CallStack
  messageGasLimit?: bigint
  stateManager: { getCode(address: Address): Promise<Uint8Array> }
  memory: { read(offset: number, size: number, avoidCopy?: boolean): Uint8Array; extend(offset: number, size: number): void; write(offset: number, size: number, value: Uint8Array): void }
  interpreter: {
    isStatic(): boolean
    addStipend(value: bigint): void
    call(gasLimit: bigint, address: Address, value: bigint, data: Uint8Array): Promise<bigint>
    callStatic(gasLimit: bigint, address: Address, value: bigint, data: Uint8Array): Promise<bigint>
    getReturnData(): Uint8Array
  }
}

interface CallFamilyOptions {
  currentGasLimit: bigint
  toAddress: Address
  value: bigint
  inOffset: bigint
  inLength: bigint
  outOffset: bigint
  outLength: bigint
  includeValueTransfer: boolean
  includeNewAccountPostCheck: boolean
  eip7702GetAccessCost(runState: CallRunState, common: Common, address: Address, charge2929Gas: boolean): Promise<{ gas: bigint; delegationAddress: Uint8Array | null }>
  eip7702WarmAddress(runState: CallRunState, delegationAddress: Uint8Array): void
}

/** What these handlers use of the EVM's modules (opcodes/EIP7928.js, EIP2929.js, util.js), loaded by interpreter-patches.ts. */
export interface CallInternals {
  callFamilyGas(runState: CallRunState, gas: bigint, common: Common, opts: CallFamilyOptions): Promise<bigint>
  getAddressAccessCost(runState: CallRunState, address: Uint8Array, common: Common, chargeGas?: boolean): bigint
  warmAddress(runState: CallRunState, address: Uint8Array): void
  trap(error: string): never
  errorMessages: Record<string, string>
}

type Handler = (runState: CallRunState, common: Common) => Promise<void>
type GasHandler = (runState: CallRunState, gas: bigint, common: Common) => Promise<bigint>

export interface CallHandlers {
  call: Handler
  callGas: GasHandler
  staticCall: Handler
  staticCallGas: GasHandler
}

/** The stock `writeCallOutput` (opcodes/util.js): at most outLength bytes of the return data into memory at outOffset. */
function writeCallOutput(runState: CallRunState, outOffset: bigint, outLength: bigint): void {
  const returnData = runState.interpreter.getReturnData()
  if (returnData.length > 0) {
    let dataLength = Number(outLength)
    if (BigInt(returnData.length) < outLength) dataLength = returnData.length
    // nothing to write (Solidity asks for no output when it copies the return data itself): the
    // stock extend and write of zero bytes do nothing
    if (dataLength === 0) return
    const memOffset = Number(outOffset)
    // the stock getDataSlice(returnData, 0, dataLength): dataLength <= returnData.length, so no
    // padding; all of it (nearly every call: a word returned into a word) is the array itself, as
    // the write only reads it (return data is a Buffer, whose subarray was the costliest line of a
    // call in the frame probe, scripts/probe/frame-cost.ts: ~6% of its CPU)
    const data = dataLength === returnData.length ? returnData : returnData.subarray(0, dataLength)
    runState.memory.extend(memOffset, dataLength)
    runState.memory.write(memOffset, dataLength, data)
  }
}

/** CALL's and STATICCALL's handlers and gas handlers, the stock ones over `addressOfWord`. */
export function callHandlers(internals: CallInternals): CallHandlers {
  const { callFamilyGas, getAddressAccessCost, warmAddress, trap, errorMessages } = internals
  const STATIC_STATE_CHANGE = errorMessages.STATIC_STATE_CHANGE

  // gas.js's eip7702GetAccessCost: the delegation designator (0xef0100) compared in place
  const eip7702GetAccessCost: CallFamilyOptions['eip7702GetAccessCost'] = async (runState, common, address, charge2929Gas) => {
    const code = await runState.stateManager.getCode(address)
    if (code.length >= 3 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00) {
      const delegationAddress = code.slice(3, 24)
      // just get the cost, don't warm yet
      return { gas: getAddressAccessCost(runState, delegationAddress, common, charge2929Gas), delegationAddress }
    }
    return { gas: 0n, delegationAddress: null }
  }
  // gas.js's eip7702WarmAddress
  const eip7702WarmAddress: CallFamilyOptions['eip7702WarmAddress'] = (runState, delegationAddress) => warmAddress(runState, delegationAddress)

  const callGas: GasHandler = async (runState, gas, common) => {
    const [currentGasLimit, toAddr, value, inOffset, inLength, outOffset, outLength] = runState.stack.peek(7)
    if (runState.interpreter.isStatic() && value !== 0n) trap(STATIC_STATE_CHANGE)
    return callFamilyGas(runState, gas, common, {
      currentGasLimit,
      toAddress: addressOfWord(toAddr),
      value,
      inOffset,
      inLength,
      outOffset,
      outLength,
      includeValueTransfer: true,
      includeNewAccountPostCheck: true,
      eip7702GetAccessCost,
      eip7702WarmAddress,
    })
  }

  const staticCallGas: GasHandler = async (runState, gas, common) => {
    const [currentGasLimit, toAddr, inOffset, inLength, outOffset, outLength] = runState.stack.peek(6)
    return callFamilyGas(runState, gas, common, {
      currentGasLimit,
      toAddress: addressOfWord(toAddr),
      value: 0n,
      inOffset,
      inLength,
      outOffset,
      outLength,
      includeValueTransfer: false,
      includeNewAccountPostCheck: false,
      eip7702GetAccessCost,
      eip7702WarmAddress,
    })
  }

  const call: Handler = async (runState, common) => {
    const [, toAddr, value, inOffset, inLength, outOffset, outLength] = runState.stack.popN(7)
    const toAddress = addressOfWord(toAddr)
    let data = NO_CALL_DATA
    if (inLength !== 0n) data = runState.memory.read(Number(inOffset), Number(inLength), true)
    let gasLimit = runState.messageGasLimit!
    runState.messageGasLimit = undefined
    if (value !== 0n) {
      const callStipend = common.param('callStipendGas')
      runState.interpreter.addStipend(callStipend)
      gasLimit += callStipend
    }
    const ret = await runState.interpreter.call(gasLimit, toAddress, value, data)
    // Write return data to memory
    writeCallOutput(runState, outOffset, outLength)
    runState.stack.push(ret)
  }

  const staticCall: Handler = async (runState) => {
    const value = 0n
    const [, toAddr, inOffset, inLength, outOffset, outLength] = runState.stack.popN(6)
    const toAddress = addressOfWord(toAddr)
    const gasLimit = runState.messageGasLimit!
    runState.messageGasLimit = undefined
    let data = NO_CALL_DATA
    if (inLength !== 0n) data = runState.memory.read(Number(inOffset), Number(inLength), true)
    const ret = await runState.interpreter.callStatic(gasLimit, toAddress, value, data)
    // Write return data to memory
    writeCallOutput(runState, outOffset, outLength)
    runState.stack.push(ret)
  }

  return { call, callGas, staticCall, staticCallGas }
}
