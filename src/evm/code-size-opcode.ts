/**
 * EXTCODESIZE (0x3b, `@ethereumjs/evm` 10.1.3 opcodes/functions.js) with the target Address made
 * once from the stack word by call-opcodes.ts's `addressOfWord`. Installed per EVM by
 * patchEvmInstance (interpreter-patches.ts 19.) over the stock entry only.
 *
 * A bench:quote mix execution runs ~5.4 (Solidity's check that a call's target has code, before
 * each external call that expects return data). The stock handler is an async function that makes
 * the Address through `createAddressFromStackBigInt` (the word to a hex string, the string to
 * bytes, the bytes padded by a copy): with the promise of the function itself, ~1.3% of the mix's
 * EVM CPU for those few steps (profile of count-quote-steps, sixteenth session). Here the Address
 * comes from `addressOfWord` (the same bytes, the word kept on it) and the handler is a plain
 * function answering the code read's own promise. Stack effects, errors (the stack's own `pop`),
 * the EIP-7928 access list entry and EOF code seen as EOFBYTES are the stock handler's:
 * code-size-opcode.test.ts compares them with it.
 */
import type { Address } from '@ethereumjs/util'
import { addressOfWord } from './call-opcodes.ts'

export interface CodeSizeRunState {
  stack: { pop(): bigint; push(value: bigint): void }
  interpreter: { _evm: { common: { isActivatedEIP(eip: number): boolean }; blockLevelAccessList?: { addAddress(address: string): void } } }
  stateManager: { getCode(address: Address): Promise<Uint8Array> }
}

/** What the handler uses of the EVM's EOF module (eof/util.js), loaded by interpreter-patches.ts. */
export interface CodeSizeInternals {
  isEOF(code: Uint8Array): boolean
  EOFBYTES: Uint8Array
}

/** The EXTCODESIZE handler: the stock one over `addressOfWord`, without an async function of its own. */
export function codeSizeHandler({ isEOF, EOFBYTES }: CodeSizeInternals): (runState: CodeSizeRunState) => Promise<void> {
  const eofSize = BigInt(EOFBYTES.length)
  return (runState) => {
    const stack = runState.stack
    const address = addressOfWord(stack.pop())
    const evm = runState.interpreter._evm
    // EIP-7928: the address in the block's access list
    if (evm.common.isActivatedEIP(7928)) evm.blockLevelAccessList?.addAddress(address.toString())
    // legacy code sees EOF code as EOFBYTES
    return runState.stateManager.getCode(address).then((code) => stack.push(isEOF(code) ? eofSize : BigInt(code.length)))
  }
}
