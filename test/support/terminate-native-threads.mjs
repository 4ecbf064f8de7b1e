/**
 * Run as its own process by test/crypto/thread-termination.e2e.test.ts, so that an abort is the
 * process's exit, not the test runner's: `node terminate-native-threads.mjs MODE COUNT` starts
 * COUNT worker threads, four at a time (native-call-thread.mjs in MODE; each takes ~0.7 s to load
 * tsx and its modules), lets each loop for a random 0-10 ms, then terminates it (for
 * 'secp256k1-gated', after closing its native-call gate, as the pool does). Prints one JSON line
 * {"mode","terminated"} and exits 0 when every one was. AT_ONCE sets how many threads run at once
 * (default 4; 1 for the sequential runs BENCHMARKS.md quotes); PROGRESS=1 writes each terminate's
 * count to stderr, so a run that aborts shows at which one.
 */
import { Worker } from 'node:worker_threads'
import { register } from 'tsx/esm/api'

register()
const { closeNativeCallGate } = await import('../../src/crypto/native-call-gate.ts')
const [mode, count] = [process.argv[2], Number(process.argv[3])]
const AT_ONCE = Number(process.env.AT_ONCE ?? 4)
let terminated = 0

async function startLoopStop() {
  const worker = new Worker(new URL('./native-call-thread.mjs', import.meta.url), { workerData: { mode } })
  const ready = await new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 10))
  if (ready.gate !== undefined && !(await closeNativeCallGate(ready.gate, 5_000))) throw new Error('a call stayed inside native code for 5 s')
  await worker.terminate()
  terminated++
  if (process.env.PROGRESS) process.stderr.write(`${terminated} `)
}

for (let started = 0; started < count; started += AT_ONCE) {
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, count - started) }, startLoopStop))
}
console.log(JSON.stringify({ mode, terminated }))
