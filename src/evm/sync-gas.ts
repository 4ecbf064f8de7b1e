/**
 * Synchronous twins of the ethereumjs dynamic-gas handlers that never touch state: memory
 * expansion and per-word costs. The stock handlers are `async` functions with no `await` inside;
 * as async functions they cost a promise per opcode. These compute the same value with the same
 * helpers (`subMemUsage`, `divCeil`, `trap` from the very module the EVM uses), line for line.
 * SLOAD's and EXTCODESIZE's EIP-2929 access costs read and warm the journal's sets, synchronously
 * as the stock handlers do. Gas equality with anvil and geth is checked by the fixture tests.
 */
import type { Common } from '@ethereumjs/common'
import { withinPaidMemory, type PaidMemoryRunState } from './word-memory.ts'
import { accessSlot, type SlotAccessRunState } from './storage-slots.ts'
import { addressOfWord } from './call-opcodes.ts'

export interface GasRunState {
  stack: { peek(n?: number): bigint[] }
  env: { eof?: unknown }
  interpreter: { getReturnDataSize(): bigint }
  memoryWordCount: bigint
  highestMemCost: bigint
}

/** what LOG's gas reads beyond the other handlers: the opcode (its topic count) and whether the frame is static */
interface LogGasRunState extends GasRunState {
  opCode: number
  interpreter: GasRunState['interpreter'] & { isStatic(): boolean }
}

type SubMemUsage = (runState: GasRunState, offset: bigint, length: bigint, common: Common) => bigint
export type SyncGasHandler = (runState: GasRunState, gas: bigint, common: Common) => bigint

interface EvmOpcodeUtil {
  subMemUsage: SubMemUsage
  divCeil(a: bigint, b: bigint): bigint
  trap(err: string): never
}

interface EvmErrors {
  EVMError: { errorMessages: Record<string, string> }
}

export async function loadSyncGasHandlers(): Promise<Map<number, SyncGasHandler>> {
  const evmEntry = import.meta.resolve('@ethereumjs/evm')
  const util = (await import(new URL('./opcodes/util.js', evmEntry).href)) as EvmOpcodeUtil
  const { EVMError } = (await import(new URL('./errors.js', evmEntry).href)) as EvmErrors
  const { subMemUsage, divCeil, trap } = util
  const { accessAddressEIP2929 } = (await import(new URL('./opcodes/EIP2929.js', evmEntry).href)) as {
    accessAddressEIP2929(runState: GasRunState, address: Uint8Array, common: Common, chargeGas?: boolean): bigint
  }

  // a word access inside the memory already paid for costs nothing (word-memory.ts), decided without bigint division
  const memory = (width: bigint): SyncGasHandler => {
    const bytes = Number(width)
    return (rs, gas, common) => (withinPaidMemory(rs as unknown as PaidMemoryRunState, bytes) === true ? gas : gas + subMemUsage(rs, rs.stack.peek()[0], width, common))
  }
  const range: SyncGasHandler = (rs, gas, common) => {
    const [offset, length] = rs.stack.peek(2)
    return gas + subMemUsage(rs, offset, length, common)
  }
  const copy: SyncGasHandler = (rs, gas, common) => {
    const [memOffset, , dataLength] = rs.stack.peek(3)
    gas += subMemUsage(rs, memOffset, dataLength, common)
    if (dataLength !== 0n) gas += common.param('copyGas') * divCeil(dataLength, 32n)
    return gas
  }

  return new Map<number, SyncGasHandler>([
    // EXP
    [0x0a, (rs, gas, common) => {
      const [, exponent] = rs.stack.peek(2)
      if (exponent === 0n) return gas
      let byteLength = exponent.toString(2).length / 8
      if (byteLength > Math.trunc(byteLength)) byteLength = Math.trunc(byteLength) + 1
      if (byteLength < 1 || byteLength > 32) trap(EVMError.errorMessages.OUT_OF_RANGE)
      return gas + BigInt(byteLength) * common.param('expByteGas')
    }],
    // KECCAK256
    [0x20, (rs, gas, common) => {
      const [offset, length] = rs.stack.peek(2)
      gas += subMemUsage(rs, offset, length, common)
      return gas + common.param('keccak256WordGas') * divCeil(length, 32n)
    }],
    [0x37, copy], // CALLDATACOPY
    [0x39, copy], // CODECOPY
    // RETURNDATACOPY
    [0x3e, (rs, gas, common) => {
      const [, returnDataOffset, dataLength] = rs.stack.peek(3)
      if (returnDataOffset + dataLength > rs.interpreter.getReturnDataSize() && rs.env.eof === undefined) {
        trap(EVMError.errorMessages.OUT_OF_GAS)
      }
      return copy(rs, gas, common)
    }],
    [0x51, memory(32n)], // MLOAD
    [0x52, memory(32n)], // MSTORE
    [0x53, memory(1n)], // MSTORE8
    // MCOPY
    [0x5e, (rs, gas, common) => {
      const [dst, src, length] = rs.stack.peek(3)
      gas += 3n * ((length + 31n) / 32n)
      gas += subMemUsage(rs, src, length, common)
      return gas + subMemUsage(rs, dst, length, common)
    }],
    // SLOAD: warm/cold access cost (EIP-2929); the fast path never runs with stateless EIPs active
    [0x54, (rs, gas, common) => {
      const key = rs.stack.peek()[0]
      return gas + accessSlot(rs as unknown as SlotAccessRunState, key, false, common)
    }],
    // EXTCODESIZE (gas.js 0x3b): the account's EIP-2929 access cost (the fast path never runs with
    // EIP 6800/7864 active, whose witness cost replaces it) and EIP-8038's code-read cost, the
    // address made from the stack word by addressOfWord (the stock: createAddressFromStackBigInt,
    // through a hex string), and no promise: the stock gas handler is an async function
    [0x3b, (rs, gas, common) => {
      const address = addressOfWord(rs.stack.peek()[0])
      if (common.isActivatedEIP(2929)) gas += accessAddressEIP2929(rs, address.bytes, common, true)
      if (common.isActivatedEIP(8038)) gas += common.param('warmstoragereadGas')
      return gas
    }],
    [0xf3, range], // RETURN
    // LOG0-4 (gas.js 0xa0): no log in a static call; memory, then the topics and the data bytes
    ...[0xa0, 0xa1, 0xa2, 0xa3, 0xa4].map((op): [number, SyncGasHandler] => [op, (state, gas, common) => {
      const rs = state as LogGasRunState
      if (rs.interpreter.isStatic()) trap(EVMError.errorMessages.STATIC_STATE_CHANGE)
      const [memOffset, memLength] = rs.stack.peek(2)
      const topicsCount = rs.opCode - 0xa0
      if (topicsCount < 0 || topicsCount > 4) trap(EVMError.errorMessages.OUT_OF_RANGE)
      gas += subMemUsage(rs, memOffset, memLength, common)
      return gas + common.param('logTopicGas') * BigInt(topicsCount) + memLength * common.param('logDataGas')
    }]),
    [0xfd, range], // REVERT
  ])
}
