/**
 * A child logger made on its first line, not before.
 *
 * Why: every JSON-RPC call gets a child of the request logger bound to its method, partner and
 * request id, and pino makes a child eagerly (a new logger object, its bindings serialized into a
 * string). Most calls write no line of their own at the service's usual levels: under
 * bench:submit (LOG_LEVEL=warn) making those children was ~4% of the main thread's CPU profile per
 * acknowledgement, for nothing. A line at a level the parent does not write is dropped here without
 * making the child; any other use (a line, `level`, a grandchild) makes it once and goes to it, so
 * what is written is exactly what the eager child would have written.
 */
import type { FastifyBaseLogger } from 'fastify'

type Bindings = Parameters<FastifyBaseLogger['child']>[0]
type LogLevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** pino's level test; a logger without one (not pino) is taken to write every level */
function writes(parent: FastifyBaseLogger, level: LogLevelName): boolean {
  const test = (parent as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled
  return typeof test !== 'function' || test.call(parent, level)
}

/** The child of `parent` with `bindings`, made when it is first needed (one object until then). */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings)
}

class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  get level(): FastifyBaseLogger['level'] {
    return this.child_().level
  }

  set level(value: FastifyBaseLogger['level']) {
    this.child_().level = value
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.write('error', args)
  }
  warn(...args: unknown[]): void {
    this.write('warn', args)
  }
  info(...args: unknown[]): void {
    this.write('info', args)
  }
  debug(...args: unknown[]): void {
    this.write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.write('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: Parameters<FastifyBaseLogger['child']>[1]): FastifyBaseLogger {
    return this.child_().child(bindings, options)
  }

  /** a line at `level`: dropped while no child exists and the parent does not write the level */
  private write(level: LogLevelName, args: unknown[]): void {
    if (this.made === undefined && !writes(this.parent, level)) return
    const target = this.child_()
    Reflect.apply(target[level], target, args)
  }

  private child_(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings))
  }
}
