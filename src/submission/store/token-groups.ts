/**
 * Group commit by token: items queued while statements run share the next statement (at most
 * `maxGroup` items each, at most `maxInFlight` statements at once). Each item carries a unique
 * token; the statement answers the tokens it stored, and each caller learns whether its own came
 * back. A failed statement fails every item of its group (one statement, one transaction: nothing
 * of it is stored). The PostgreSQL store's new submissions and non-terminal appends both go this way.
 */
import { positiveInt } from '../../primitives/numbers.ts'

interface Queued<T> {
  item: T
  resolve: (stored: boolean) => void
  reject: (error: unknown) => void
}

export class TokenGroups<T extends { token: string }> {
  private queue: Queued<T>[] = []
  private readonly running = new Set<Promise<void>>()
  private readonly maxGroup: number
  private readonly maxInFlight: number

  /** `run` executes one statement for `group` and answers the tokens it stored */
  constructor(
    private readonly run: (group: readonly T[]) => Promise<Iterable<string>>,
    limits: { maxGroup: number; maxInFlight: number },
  ) {
    this.maxGroup = positiveInt('maxGroup', limits.maxGroup, 'TokenGroups')
    this.maxInFlight = positiveInt('maxInFlight', limits.maxInFlight, 'TokenGroups')
  }

  /** Queues `item`; true when the statement that carried it stored its token. */
  submit(item: T): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ item, resolve, reject })
      this.start()
    })
  }

  /** the statements in progress (close() waits for them; those still queued start as they end) */
  get inProgress(): readonly Promise<void>[] {
    return [...this.running]
  }

  private start(): void {
    while (this.queue.length > 0 && this.running.size < this.maxInFlight) {
      const group = this.queue.splice(0, this.maxGroup)
      const statement: Promise<void> = this.run(group.map((q) => q.item)).then(
        (tokens) => {
          const stored = new Set(tokens)
          for (const q of group) q.resolve(stored.has(q.item.token))
        },
        (error: unknown) => {
          for (const q of group) q.reject(error)
        },
      )
      this.running.add(statement)
      void statement.finally(() => {
        this.running.delete(statement)
        this.start()
      })
    }
  }
}
