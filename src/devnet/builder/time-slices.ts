/**
 * Slices of the event loop for the local builder's block building.
 *
 * The embedded devnet's builder executes every bundle and public transaction of a block in the
 * service's main thread. Its state reads are in memory, so each `await` of a simulation resumes as
 * a microtask: without a pause, a whole block (hundreds of bundles under bench:soak) ran as one
 * synchronous stretch of 0.4-1 s of CPU, during which no request was read and no acknowledgement
 * answered (a CPU profile of the main thread during bench:soak, issue 13). `pause()` ends a slice
 * once `sliceMs` have passed since it began: it resolves in a later turn of the event loop
 * (setImmediate: after the poll phase's I/O), so the service's requests interleave with the build.
 * Within a slice it resolves at once, so a small block still costs no extra turns.
 */
export class TimeSlices {
  private sliceStart = performance.now()
  private count = 0

  /** @param sliceMs the longest synchronous stretch between two turns of the event loop (a positive integer) */
  constructor(private readonly sliceMs: number) {
    if (!Number.isSafeInteger(sliceMs) || sliceMs < 1) throw new RangeError(`TimeSlices: sliceMs must be a positive integer, got ${sliceMs}`)
  }

  /** Turns of the event loop given back so far. */
  get yields(): number {
    return this.count
  }

  /** Starts a new slice now (at the start of a block, which begins in a turn of its own). */
  restart(): void {
    this.sliceStart = performance.now()
  }

  /** Resolves at once while the slice lasts; past it, in a later turn of the event loop, starting a new slice. */
  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < this.sliceMs) return
    this.count++
    await new Promise<void>((resolve) => setImmediate(resolve))
    this.sliceStart = performance.now()
  }
}
