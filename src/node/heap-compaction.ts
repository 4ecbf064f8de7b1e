/**
 * Periodic full compaction of V8's old space (issue 10: RSS flat after bench:soak's first minute).
 *
 * Why: under steady load V8's old space fills with holes. A mark-compact frees the dead objects but
 * moves live ones out of a page only when the page is mostly empty (its free share above a
 * threshold V8 derives from its compaction speed, ~60-70% here) and only up to 4 MB of them per
 * collection; every other page with a live object stays committed, holes and all, and the holes
 * stay resident. V8's memory reducer, which compacts harder, runs only once the isolate goes quiet,
 * which a loaded service never does. Under bench:soak (50/s, shared machine) the main isolate's
 * old space right after its mark-compacts went from 65 MB used / 82 MB committed in minute 1 to
 * 68 / 112 in minute 5 and 74 / 130 in minute 8, each worker's from 33 / 39 to 38 / 52-57: the
 * rise of the committed heaps over flat live heaps that issue 10's RSS slope measures
 * (BENCHMARKS.md, h15-heap).
 *
 * How: V8's `--compact-on-every-full-gc` makes a mark-compact evacuate every page of old space
 * (code space too), so after it the space holds its live objects and little more. It is a V8 flag,
 * read at each mark-compact and shared by every isolate of the process (the main thread's and each
 * worker's), and `v8.setFlagsFromString` can turn it on and off while the process runs. Always on,
 * it made each of the main isolate's mark-compacts pause ~4x longer under bench:soak; so it is on
 * for COMPACTION_WINDOW_MS out of every `everyMs`: each isolate's first mark-compact in the window
 * compacts fully, the others keep V8's cheap default.
 */
import { setFlagsFromString } from 'node:v8'

/**
 * How long the flag stays on each time, ms: long enough for each isolate's next mark-compact to
 * fall in it (under bench:soak's 50/s the main isolate runs one every 5-15 s, a worker one every
 * 20-40 s), short enough that most mark-compacts keep V8's cheaper default.
 */
export const COMPACTION_WINDOW_MS = 30_000

export interface HeapCompactionOptions {
  /** a window starts every this many ms (more than COMPACTION_WINDOW_MS) */
  everyMs: number
  /** how V8 flags are set; v8.setFlagsFromString unless given (tests) */
  setFlags?: (flags: string) => void
}

/**
 * Turns V8's full compaction of old space on or off for every isolate of this process, from its
 * next mark-compact on.
 */
export function setFullCompaction(on: boolean, setFlags: (flags: string) => void = setFlagsFromString): void {
  setFlags(on ? '--compact-on-every-full-gc' : '--no-compact-on-every-full-gc')
}

/** Turns V8's full compaction on for COMPACTION_WINDOW_MS out of every `everyMs` until stopped. */
export class PeriodicHeapCompaction {
  readonly #everyMs: number
  readonly #setFlags: (flags: string) => void
  #interval: NodeJS.Timeout | undefined
  #window: NodeJS.Timeout | undefined
  #windows = 0

  constructor(options: HeapCompactionOptions) {
    if (!(options.everyMs > COMPACTION_WINDOW_MS)) throw new RangeError(`everyMs must exceed the ${COMPACTION_WINDOW_MS} ms window, got ${options.everyMs}`)
    this.#everyMs = options.everyMs
    this.#setFlags = options.setFlags ?? setFlagsFromString
  }

  /** windows opened so far */
  get windows(): number {
    return this.#windows
  }

  start(): void {
    if (this.#interval !== undefined) return
    // the timers never keep the process alive on their own: shutdown does not wait for a window
    this.#interval = setInterval(() => this.#open(), this.#everyMs).unref()
  }

  /** ends any open window (V8's default back) and the schedule */
  stop(): void {
    clearInterval(this.#interval)
    this.#interval = undefined
    if (this.#window !== undefined) this.#close()
  }

  #open(): void {
    if (this.#window !== undefined) return
    this.#windows++
    setFullCompaction(true, this.#setFlags)
    this.#window = setTimeout(() => this.#close(), COMPACTION_WINDOW_MS).unref()
  }

  #close(): void {
    clearTimeout(this.#window)
    this.#window = undefined
    setFullCompaction(false, this.#setFlags)
  }
}
