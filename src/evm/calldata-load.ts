/**
 * CALLDATALOAD (0x35) without ethereumjs' JavaScript hex round trip: the stock handler turns the
 * 32 bytes into a bigint through `bytesToBigInt` (a hex string built a byte at a time, then
 * parsed), and pads a short read by shifting a second bigint. A quote's router call reads its plan
 * with a few hundred of them. Here the word is read through Node's hex encoder, a short read from a
 * zero-padded copy. Same stack effects and errors (the stack's own pop), same result for every
 * offset: past the calldata, zero; partly past it, zero-padded on the right.
 */
import { wordOfBytes } from './word-memory.ts'

export interface CalldataRunState {
  stack: { pop(): bigint; push(value: bigint): void }
  interpreter: { getCallData(): Uint8Array }
}

export function calldataLoad(runState: CalldataRunState): void {
  const pos = runState.stack.pop()
  const data = runState.interpreter.getCallData()
  // the stock handler: past the size, zero; at the size, an empty read, also zero
  if (pos >= data.length) {
    runState.stack.push(0n)
    return
  }
  const i = Number(pos)
  if (i + 32 <= data.length) {
    runState.stack.push(wordOfBytes(data.subarray(i, i + 32)))
    return
  }
  const padded = new Uint8Array(32)
  padded.set(data.subarray(i))
  runState.stack.push(wordOfBytes(padded))
}
