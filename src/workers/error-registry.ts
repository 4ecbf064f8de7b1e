/**
 * Errors across a thread boundary. Structured clone keeps an Error's message but not its class or
 * its fields, and the server decides status codes and bodies by class (`instanceof
 * QuoteFailedError`, `UpstreamError`, `ExecutionBudgetError`, ...). So an error is sent as its
 * class name and its own fields, and rebuilt on the other side as an instance of the class of that
 * name, found in a small registry: same class, same message, same fields (`reason`, `details`,
 * `code`, ...), its cause rebuilt the same way.
 *
 * The instance is made with Object.create on the class's prototype, not by calling its
 * constructor: constructors have different signatures (and change as classes move onto
 * BaseError), while the fields an instance carries are exactly what was sent. `walk()`, getters
 * and methods such as `toDetails()` come from the prototype as usual.
 *
 * A class missing from the registry comes back as the nearest built-in (Error, TypeError,
 * RangeError) with the same name and message: the server answers such errors as internal
 * errors anyway.
 */
import { BackrunSearchError } from '../backrun/cycle-search.ts'
import { InvalidBackrunError } from '../backrun/backrun-calldata.ts'
import { UpstreamError } from '../chain/types.ts'
import { AmmMathError } from '../dex/math/errors.ts'
import { Erc20SlotNotFoundError } from '../evm/erc20-slots.ts'
import { ExecutionBudgetError } from '../evm/execution-budget.ts'
import { TransactionRejectedError } from '../evm/simulator.ts'
import { ViewCallError } from '../pools/view-calls.ts'
import { BaseError } from '../primitives/base-error.ts'
import { InvalidSwapPlanError } from '../quote/router-calldata.ts'
import { QuoteFailedError } from '../quote/types.ts'
import { RouteSearchError } from '../routing/route-search.ts'
import { BackrunPlanError } from '../submission/backrun-planning.ts'
import { TransportError } from '../transport/transport-error.ts'
import { TxDecodeError } from '../tx/errors.ts'

/** An error as it crosses a thread: structured-clone safe. */
export interface SerializedError {
  /** the class's name, the registry's key */
  className: string
  message: string
  stack?: string
  /** the instance's own fields (`name` among them), each structured-clone safe */
  fields: Record<string, unknown>
  cause?: SerializedError | { value: unknown }
}

type AnyErrorClass = abstract new (...args: never[]) => Error

/**
 * Every error class the quote, eth_backrun and dispatcher paths (and the state reads beneath them)
 * may throw, by class name. A class added to the domain that the server tells apart must be added here.
 */
const DOMAIN_ERROR_CLASSES: readonly AnyErrorClass[] = [
  QuoteFailedError,
  UpstreamError,
  ExecutionBudgetError,
  TransportError,
  BaseError,
  RouteSearchError,
  BackrunSearchError,
  InvalidBackrunError,
  AmmMathError,
  Erc20SlotNotFoundError,
  TransactionRejectedError,
  ViewCallError,
  InvalidSwapPlanError,
  TxDecodeError,
  BackrunPlanError,
]

const BUILT_IN_CLASSES: readonly AnyErrorClass[] = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError]

export class ErrorRegistry {
  private readonly byName = new Map<string, AnyErrorClass>()

  constructor(classes: readonly AnyErrorClass[]) {
    for (const errorClass of [...BUILT_IN_CLASSES, ...classes]) {
      const existing = this.byName.get(errorClass.name)
      if (existing !== undefined && existing !== errorClass) throw new Error(`two error classes are named ${errorClass.name}`)
      this.byName.set(errorClass.name, errorClass)
    }
  }

  serialize(error: unknown, depth = 0): SerializedError {
    if (!(error instanceof Error)) return { className: 'Error', message: String(error), fields: { thrown: cloneable(error) } }
    const fields: Record<string, unknown> = {}
    for (const key of Object.keys(error)) {
      if (key === 'cause') continue
      fields[key] = cloneable((error as unknown as Record<string, unknown>)[key])
    }
    const serialized: SerializedError = { className: classNameOf(error), message: error.message, stack: error.stack, fields }
    if ('cause' in error && error.cause !== undefined) {
      // a cause chain is short; a loop (or an absurd depth) is cut rather than followed
      serialized.cause = error.cause instanceof Error && depth < 8 ? this.serialize(error.cause, depth + 1) : { value: cloneable(error.cause) }
    }
    return serialized
  }

  rebuild(serialized: SerializedError): Error {
    const errorClass = this.byName.get(serialized.className) ?? Error
    const error = Object.create(errorClass.prototype as object) as Error
    // as the Error constructor defines them: own, writable, not enumerable
    Object.defineProperty(error, 'message', { value: serialized.message, writable: true, configurable: true, enumerable: false })
    if (serialized.stack !== undefined) Object.defineProperty(error, 'stack', { value: serialized.stack, writable: true, configurable: true, enumerable: false })
    for (const [key, value] of Object.entries(serialized.fields)) {
      Object.defineProperty(error, key, { value, writable: true, configurable: true, enumerable: true })
    }
    if (serialized.cause !== undefined) {
      const cause = 'className' in serialized.cause ? this.rebuild(serialized.cause) : serialized.cause.value
      Object.defineProperty(error, 'cause', { value: cause, writable: true, configurable: true, enumerable: false })
    }
    return error
  }
}

/** The registry of the quote, eth_backrun and dispatcher paths. */
export const domainErrors = new ErrorRegistry(DOMAIN_ERROR_CLASSES)

function classNameOf(error: Error): string {
  const constructor = (Object.getPrototypeOf(error) as { constructor?: { name?: unknown } } | null)?.constructor
  return typeof constructor?.name === 'string' && constructor.name !== '' ? constructor.name : 'Error'
}

/**
 * A value structured clone accepts. Errors nested in fields (a details object holding one) are
 * flattened to their name and message; functions and symbols, which clone refuses, are dropped.
 */
function cloneable(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? undefined : value
  if (value instanceof Error) return { name: value.name, message: value.message }
  if (ArrayBuffer.isView(value) || value instanceof Date || value instanceof RegExp) return value
  if (depth > 8) return undefined
  if (Array.isArray(value)) return value.map((v) => cloneable(v, depth + 1))
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [cloneable(k, depth + 1), cloneable(v, depth + 1)]))
  if (value instanceof Set) return new Set([...value].map((v) => cloneable(v, depth + 1)))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = cloneable(v, depth + 1)
  return out
}
