/** A FIFO bound on concurrent asynchronous work: at most `max` runs at once, the rest wait their turn. */
export class Limiter {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly max: number) {}

  /** Runs `fn` in its turn; a caller whose `signal` aborts while it waits leaves the line with the signal's reason. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.active >= this.max) await this.turn(signal)
    this.active++
    try {
      return await fn()
    } finally {
      this.active--
      this.waiting.shift()?.()
    }
  }

  private turn(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const reason = (): Error => (signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for its turn'))
      if (signal?.aborted === true) {
        reject(reason())
        return
      }
      const go = (): void => {
        signal?.removeEventListener('abort', leave)
        resolve()
      }
      const leave = (): void => {
        const index = this.waiting.indexOf(go)
        if (index >= 0) this.waiting.splice(index, 1)
        reject(reason())
      }
      this.waiting.push(go)
      signal?.addEventListener('abort', leave, { once: true })
    })
  }
}
