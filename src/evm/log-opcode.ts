/**
 * LOG0-LOG4 (0xa0-0xa4) with the topics made into bytes directly: the stock handler turns each
 * topic into bytes through `bigIntToBytes` (a hex string) and `setLengthLeft`. A swap emits two to
 * four logs (Transfer, Swap, Sync), each with up to three topics. Same stack effects and errors
 * (the stack's own popN), same memory read, the same `interpreter.log` call; its gas is computed
 * by sync-gas.ts (so the step no longer takes the stock, asynchronous path).
 */
import { bytesOfWord } from './word-memory.ts'

export interface LogRunState {
  opCode: number
  stack: { popN(n: number): bigint[] }
  memory: { read(offset: number, size: number): Uint8Array }
  interpreter: { log(data: Uint8Array, topicsCount: number, topics: Uint8Array[]): void }
}

export function logOpcode(runState: LogRunState): void {
  const [memOffset, memLength] = runState.stack.popN(2)
  const topicsCount = runState.opCode - 0xa0
  const topics = runState.stack.popN(topicsCount).map(bytesOfWord)
  const data = memLength === 0n ? new Uint8Array(0) : runState.memory.read(Number(memOffset), Number(memLength))
  runState.interpreter.log(data, topicsCount, topics)
}
