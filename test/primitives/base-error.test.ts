import { describe, expect, it } from 'vitest'
import { BaseError, isBaseError, walkErrorChain } from '../../src/primitives/base-error.ts'

class LeafError extends BaseError<{ code: number }> {
  override readonly name = 'LeafError'
  constructor(code: number) {
    super(`leaf failed with ${code}`, { details: { code } })
  }
}

class MiddleError extends BaseError {
  override readonly name = 'MiddleError'
}

class OtherError extends BaseError {
  override readonly name = 'OtherError'
}

describe('BaseError', () => {
  it('keeps the short message as the message, and the details and cause beside it', () => {
    const cause = new Error('socket hang up')
    const error = new BaseError('upstream unavailable', { details: { status: 503 }, cause })
    expect(error.message).toBe('upstream unavailable')
    expect(error.shortMessage).toBe('upstream unavailable')
    expect(error.details).toEqual({ status: 503 })
    expect(error.cause).toBe(cause)
    expect(error.name).toBe('BaseError')
    expect(error).toBeInstanceOf(Error)
    expect(error.stack).toContain('upstream unavailable')
  })

  it('has no own cause property when none was given (ES2022: `cause` in error is false)', () => {
    const error = new BaseError('nothing behind it')
    expect('cause' in error).toBe(false)
    expect(error.details).toBeUndefined()
    expect(error.metaMessages).toBeUndefined()
  })

  it('lists meta messages under the short message', () => {
    const error = new BaseError('invalid configuration', { metaMessages: ['PORT must be a port number', 'RELAYS is not JSON'] })
    expect(error.message).toBe('invalid configuration:\n  - PORT must be a port number\n  - RELAYS is not JSON')
    expect(error.shortMessage).toBe('invalid configuration')
    expect(error.metaMessages).toEqual(['PORT must be a port number', 'RELAYS is not JSON'])
  })

  it('takes a full message that says more than the short message', () => {
    const error = new BaseError('HTTP 503', { message: 'eth_call: HTTP 503' })
    expect(error.message).toBe('eth_call: HTTP 503')
    expect(error.shortMessage).toBe('HTTP 503')
  })

  it('lets a subclass name itself and type its details', () => {
    const error = new LeafError(7)
    expect(error).toMatchObject({ name: 'LeafError', message: 'leaf failed with 7', details: { code: 7 } })
    expect(error).toBeInstanceOf(BaseError)
    expect(isBaseError(error)).toBe(true)
    expect(isBaseError(new Error('plain'))).toBe(false)
    expect(String(error)).toBe('LeafError: leaf failed with 7')
  })
})

describe('walk', () => {
  const leaf = new LeafError(42)
  const plain = new Error('wrapped', { cause: leaf })
  const top = new MiddleError('request failed', { cause: plain })

  it('without a matcher returns the innermost cause', () => {
    expect(top.walk()).toBe(leaf)
    expect(leaf.walk()).toBe(leaf)
  })

  it('finds the first error of a class down the chain, itself included', () => {
    expect(top.walk(LeafError)?.details.code).toBe(42)
    expect(top.walk(MiddleError)).toBe(top)
    expect(top.walk(Error)).toBe(top)
    expect(top.walk(OtherError)).toBeUndefined()
  })

  it('finds the first error a predicate accepts', () => {
    expect(top.walk((e) => e instanceof Error && e.message === 'wrapped')).toBe(plain)
    expect(top.walk(function isNothing() {
      return false
    })).toBeUndefined()
  })

  it('walks any value, non-error causes included', () => {
    const error = new Error('outer', { cause: 'a string cause' })
    expect(walkErrorChain(error)).toBe('a string cause')
    expect(walkErrorChain('not an error')).toBe('not an error')
    expect(walkErrorChain(plain, LeafError)).toBe(leaf)
    expect(walkErrorChain(undefined, LeafError)).toBeUndefined()
  })

  it('follows a chain that loops back once around', () => {
    const a = new Error('a')
    const b = new Error('b', { cause: a })
    a.cause = b
    expect(walkErrorChain(a, OtherError)).toBeUndefined()
    expect(walkErrorChain(a)).toBe(b)
  })
})
