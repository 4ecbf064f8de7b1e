/**
 * Polls the upstream head at a fixed interval and reports the heads that are not the one the
 * source is at (a newer block, or another block at the same or a lower height: a reorg). One poll
 * at a time (the next is scheduled after the previous one and its handler finish); timers are
 * unref'd so a forgotten follower never keeps the process alive; `stop()` ends it.
 */
export interface HeadFollowerOptions<Head> {
  intervalMs: number
  /** Reads the upstream's newest head (the fork: the 'latest' header, number and hash in one call). */
  poll(): Promise<Head>
  /** Whether a polled head differs from the one the source is at. */
  isNew(head: Head): boolean
  /** Called with a head `isNew` accepted; the next poll waits for it. */
  onNewHead(head: Head): Promise<void>
  onError(error: unknown): void
}

export class HeadFollower<Head> {
  private timer: NodeJS.Timeout | undefined
  private running = false
  private polls = 0

  constructor(private readonly options: HeadFollowerOptions<Head>) {
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
      if (this.running && this.options.isNew(head)) await this.options.onNewHead(head)
    } catch (error) {
      if (this.running) this.options.onError(error)
    } finally {
      this.schedule()
    }
  }
}
