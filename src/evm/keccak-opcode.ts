/**
 * KECCAK256 (0x20) without the stock handler's hex round trip: the stock handler hashes a copy of
 * the memory range and turns the digest into a bigint through @ethereumjs/util's JavaScript hex
 * encoder; here the hash reads memory in place (hashing never writes its input) and the digest
 * becomes a bigint through Node's native hex encoder. Same stack effects, same errors (the stack's
 * own popN), same memory extension (Memory.read extends as the stock call does); gas is charged by
 * the step before the handler runs and is untouched.
 */
import { keccak256 } from './keccak.ts'
import { wordOfBytes } from './word-memory.ts'

export interface KeccakRunState {
  stack: { popN(n: number): bigint[]; push(value: bigint): void }
  memory: { read(offset: number, size: number, avoidCopy?: boolean): Uint8Array }
}

const EMPTY = new Uint8Array(0)

export function keccakOpcode(runState: KeccakRunState): void {
  const [offset, length] = runState.stack.popN(2)
  const data = length === 0n ? EMPTY : runState.memory.read(Number(offset), Number(length), true)
  runState.stack.push(wordOfBytes(keccak256(data)))
}
