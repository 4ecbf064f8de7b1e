/**
 * Finds workers whose event loop stopped turning while they hold a task: a contract that keeps the
 * thread where the execution budget cannot stop it (one precompile call that computes for seconds,
 * a bug in a loop without an await). The budget (EVM_MAX_MS) stops an execution at its next check;
 * a worker silent for longer than the budget plus a grace is past every check, so it is hung.
 *
 * Silence is measured, not task duration: a task waiting for the upstream node (fork mode, up to
 * UPSTREAM_TIMEOUT_MS and its retries) keeps its worker's event loop turning and is not hung.
 *
 * If the main thread itself was stalled (its own check came late), nothing is judged that round:
 * the workers' messages may be waiting behind the stall.
 */
import type { WorkerLink } from './worker-link.ts'

/** How often the watchdog looks, ms. */
export const WATCHDOG_INTERVAL_MS = 100

export interface HangWatchdogOptions {
  /** a worker holding a task and silent for longer than this is hung, ms */
  silenceLimitMs: number
  links: () => Iterable<WorkerLink>
  onHung: (link: WorkerLink, silentMs: number) => void
}

export class HangWatchdog {
  private readonly timer: NodeJS.Timeout
  private lastCheck = performance.now()

  constructor(private readonly options: HangWatchdogOptions) {
    this.timer = setInterval(() => this.check(), WATCHDOG_INTERVAL_MS)
    // the watchdog never keeps the process alive
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private check(): void {
    const now = performance.now()
    const stalled = now - this.lastCheck > WATCHDOG_INTERVAL_MS + this.options.silenceLimitMs / 2
    this.lastCheck = now
    for (const link of this.options.links()) {
      if (stalled) {
        link.lastSeen = Math.max(link.lastSeen, now - WATCHDOG_INTERVAL_MS)
        continue
      }
      const silentMs = now - link.lastSeen
      if (link.tasks.size > 0 && silentMs > this.options.silenceLimitMs) this.options.onHung(link, silentMs)
    }
  }
}
