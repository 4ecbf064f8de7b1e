/**
 * Polls the upstream head number at a fixed interval and reports numbers above the last one seen.
 * One poll at a time (the next is scheduled after the previous one and its handler finish); timers
 * are unref'd so a forgotten follower never keeps the process alive; `stop()` ends it.
 */
export interface HeadFollowerOptions {
  intervalMs: number
  /** Reads the upstream's newest block number (eth_blockNumber). */
  poll(): Promise<bigint>
  /** Called with a number above `current()`; the next poll waits for it. */
  onNewHead(blockNumber: bigint): Promise<void>
  /** The number the source is at now. */
  current(): bigint
  onError(error: unknown): void
}

export class HeadFollower {
  private timer: NodeJS.Timeout | undefined
  private running = false
  private polls = 0

  constructor(private readonly options: HeadFollowerOptions) {
    if (!(Number.isFinite(options.intervalMs) && options.intervalMs > 0)) {
      throw new RangeError(`pollIntervalMs must be > 0, got ${options.intervalMs}`)
    }
  }

  get pollCount(): number {
    return this.polls
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.schedule()
  }

  stop(): void {
    this.running = false
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(): void {
    if (!this.running) return
    this.timer = setTimeout(() => void this.tick(), this.options.intervalMs)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    this.timer = undefined
    this.polls++
    try {
      const head = await this.options.poll()
      if (this.running && head > this.options.current()) await this.options.onNewHead(head)
    } catch (error) {
      if (this.running) this.options.onError(error)
    } finally {
      this.schedule()
    }
  }
}
