/**
 * The gate a worker thread's native addon calls go through, so that the thread is never terminated
 * inside one.
 *
 * Why: node-addon-api's method wrappers (libsecp256k1's binding, the `secp256k1` package) end the
 * whole process when the thread they run on is terminated during the call: the addon's next N-API
 * call fails as the thread's environment stops, the wrapper throws a C++ `Napi::Error` nobody can
 * catch any more, and node aborts ("terminate called after throwing an instance of
 * 'Napi::Error'"). The pool terminates a worker's thread when the worker hangs and when the pool
 * closes (src/workers/worker-pool.ts). test/crypto/native-call-gate.test.ts checks the gate with
 * real threads; test/support/terminate-native-threads.mjs measures the abort of an ungated thread
 * (its mode 'secp256k1-ungated') against the gated one ('secp256k1-gated').
 *
 * How: two shared cells per worker thread, `closed` (written by the main thread) and `inside` (by
 * the worker). The worker marks itself inside, then reads `closed`; the main thread closes, then
 * waits until `inside` reads 0 before it terminates. Atomics are sequentially consistent, so a
 * call either saw the gate closed (and never enters native code) or is seen inside by the main
 * thread, which then waits the microseconds until it leaves. A call that finds the gate closed
 * parks its thread until the terminate, which stops an Atomics.wait at once: its task is already
 * given up on by the pool, so nothing waits for the answer it will not give.
 *
 * Not covered: a worker past its heap limit (resourceLimits) is stopped by V8 itself, at an
 * allocation; one inside a native call then still aborts. The main thread never has a gate: it is
 * never terminated by the service, so its calls skip the two atomics.
 *
 * Calls into the addon never call back into JavaScript, so they do not nest: `inside` is 0 or 1.
 */

const CLOSED = 0
const INSIDE = 1
const CELLS = 2

/** this thread's cells, once installed (worker threads of the pool only) */
let cells: Int32Array | undefined

/**
 * Makes this thread's native calls go through a gate the main thread can close; returns the memory
 * to hand to the main thread (src/workers/worker-entry.ts sends it with its state channel).
 */
export function installNativeCallGate(): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(CELLS * Int32Array.BYTES_PER_ELEMENT)
  cells = new Int32Array(buffer)
  return buffer
}

/** Before a native call; with the gate closed, it never returns (the thread waits for its terminate). */
export function enterNativeCall(): void {
  const gate = cells
  if (gate === undefined) return
  Atomics.store(gate, INSIDE, 1)
  if (Atomics.load(gate, CLOSED) === 0) return
  Atomics.store(gate, INSIDE, 0)
  // the main thread is about to terminate this thread: wait for it, outside native code
  while (Atomics.load(gate, CLOSED) !== 0) Atomics.wait(gate, CLOSED, 1)
  Atomics.store(gate, INSIDE, 1)
}

/** After a native call, also when it threw. */
export function leaveNativeCall(): void {
  if (cells !== undefined) Atomics.store(cells, INSIDE, 0)
}

/** how often the main thread looks whether a closed gate's call has left: calls take microseconds */
const DRAIN_POLL_MS = 1

/**
 * Main thread: closes a worker thread's gate and resolves true once no call is inside native code,
 * or false after `drainMs` with one still inside (a thread starved of CPU for that long; the caller
 * decides whether to terminate anyway). After it, the thread never enters native code again.
 */
export async function closeNativeCallGate(buffer: SharedArrayBuffer, drainMs: number): Promise<boolean> {
  const gate = new Int32Array(buffer)
  Atomics.store(gate, CLOSED, 1)
  const deadline = performance.now() + drainMs
  while (Atomics.load(gate, INSIDE) !== 0) {
    if (performance.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS))
  }
  return true
}
