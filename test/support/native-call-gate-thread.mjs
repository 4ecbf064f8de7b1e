/**
 * A worker thread for test/crypto/native-call-gate.test.ts: installs this thread's native-call gate
 * (src/crypto/native-call-gate.ts) and posts its memory, then makes "native calls" for ever: each
 * passes the gate, counts itself in cells[ENTERED], and stays inside until the main thread sets
 * cells[RELEASE] (a stand-in for a native call of any length), which the thread clears again.
 * Plain JavaScript that registers tsx's ESM hooks first, as src/workers/worker-bootstrap.mjs does.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { register } from 'tsx/esm/api'

register()
const { enterNativeCall, installNativeCallGate, leaveNativeCall } = await import('../../src/crypto/native-call-gate.ts')
const ENTERED = 0
const RELEASE = 1
const cells = new Int32Array(workerData.cells)
parentPort.postMessage({ gate: installNativeCallGate() })
for (;;) {
  enterNativeCall()
  Atomics.add(cells, ENTERED, 1)
  Atomics.notify(cells, ENTERED)
  while (Atomics.load(cells, RELEASE) === 0) Atomics.wait(cells, RELEASE, 0)
  Atomics.store(cells, RELEASE, 0)
  leaveNativeCall()
}
