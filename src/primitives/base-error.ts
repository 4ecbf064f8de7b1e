/**
 * The root of the service's error family, in the manner of viem's `BaseError`: a short message that
 * says what happened, structured details beside it, the underlying error as the ES2022 `cause`, and
 * `walk()` to find a cause of a given class anywhere down the chain.
 *
 * Where it departs from viem, and why:
 * - `details` is structured (an object the logger writes as fields, or what a response body
 *   carries), not a line of text: every error of this service goes to pino as `{ err }`, and
 *   several classes already answered clients with their details object.
 * - `message` is the short message, or the short message and its meta messages as a list: no
 *   "Details:", "Docs:" or "Version:" lines. Messages are read by tests, written into lifecycle
 *   records and sent in some response bodies, so a subclass keeps the exact text it always had
 *   (`message` lets it say more than the short message, e.g. the method in front).
 *
 * A subclass sets `override readonly name = '<ClassName>'` so logs and `toMatchObject` tell the
 * classes apart, and keeps its own constructor signature: the family is the base class, not one
 * argument order.
 */

/** Details of an error: fields for the log, or what an answer carries. */
export type ErrorDetails = Readonly<Record<string, unknown>>

interface BaseErrorCommonOptions {
  /** the error this one is raised because of (ES2022 `cause`); left out of the object when undefined */
  cause?: unknown
  /**
   * Lines that follow the short message (e.g. every problem of a configuration): the message becomes
   * `<shortMessage>:` followed by one `  - <line>` per meta message.
   */
  metaMessages?: readonly string[]
  /** The full message, when it is not the short message (and its meta messages) alone. */
  message?: string
}

/** `details` is required exactly when the class's details type does not admit undefined. */
export type BaseErrorOptions<TDetails> = BaseErrorCommonOptions & (undefined extends TDetails ? { details?: TDetails } : { details: TDetails })

/** Any error class, abstract ones included: what `walk` looks for. */
export type ErrorClass<E extends Error = Error> = abstract new (...args: never[]) => E

/** What `walk` matches: an error class (instanceof), or a predicate over each error of the chain. */
export type ErrorMatcher = ErrorClass | ((error: unknown) => boolean)

export class BaseError<TDetails = ErrorDetails | undefined> extends Error {
  override readonly name: string = 'BaseError'
  /** what happened, in one line, without the context the message may add in front */
  readonly shortMessage: string
  readonly details: TDetails
  /** the lines listed under the short message in `message`, when there are any */
  readonly metaMessages?: readonly string[]

  constructor(shortMessage: string, ...[options]: undefined extends TDetails ? [options?: BaseErrorOptions<TDetails>] : [options: BaseErrorOptions<TDetails>]) {
    const opts: BaseErrorCommonOptions & { details?: TDetails } = options ?? {}
    super(opts.message ?? formatMessage(shortMessage, opts.metaMessages), opts.cause === undefined ? undefined : { cause: opts.cause })
    this.shortMessage = shortMessage
    // the conditional options type makes `details` present whenever TDetails excludes undefined
    this.details = opts.details as TDetails
    if (opts.metaMessages !== undefined && opts.metaMessages.length > 0) this.metaMessages = [...opts.metaMessages]
  }

  /** The innermost error of the cause chain (this error when it has no cause). */
  walk(): unknown
  /** The first error of the chain, this one included, for which `predicate` is true. */
  walk(predicate: (error: unknown) => boolean): unknown
  /** The first error of the chain, this one included, that is an instance of `errorClass`. */
  walk<E extends Error>(errorClass: ErrorClass<E>): E | undefined
  walk(matcher?: ErrorMatcher): unknown {
    return walkErrorChain(this, matcher)
  }
}

/**
 * {@link BaseError.walk} for any value, e.g. what a `catch` received: follows `cause` from `error`
 * (itself first) and returns the first match, or without a matcher the innermost error. A cause
 * chain that loops back is followed once around.
 */
export function walkErrorChain(error: unknown): unknown
export function walkErrorChain<E extends Error>(error: unknown, errorClass: ErrorClass<E>): E | undefined
export function walkErrorChain(error: unknown, matcher?: ErrorMatcher): unknown
export function walkErrorChain(error: unknown, matcher?: ErrorMatcher): unknown {
  const matches = matcher === undefined ? undefined : toPredicate(matcher)
  const seen = new Set<unknown>()
  let current = error
  for (;;) {
    if (matches?.(current) === true) return current
    seen.add(current)
    const next = causeOf(current)
    if (next === undefined || seen.has(next)) return matches === undefined ? current : undefined
    current = next
  }
}

function causeOf(error: unknown): unknown {
  return error !== null && typeof error === 'object' && 'cause' in error ? error.cause : undefined
}

function toPredicate(matcher: ErrorMatcher): (error: unknown) => boolean {
  if (isErrorClass(matcher)) return (error) => error instanceof matcher
  return matcher as (error: unknown) => boolean
}

/** A class whose instances are errors; a predicate (arrow or function) has no Error prototype. */
function isErrorClass(matcher: ErrorMatcher): matcher is ErrorClass {
  return matcher === Error || (typeof matcher.prototype === 'object' && matcher.prototype instanceof Error)
}

function formatMessage(shortMessage: string, metaMessages: readonly string[] | undefined): string {
  if (metaMessages === undefined || metaMessages.length === 0) return shortMessage
  return `${shortMessage}:\n  - ${metaMessages.join('\n  - ')}`
}

export function isBaseError(value: unknown): value is BaseError<unknown> {
  return value instanceof BaseError
}
