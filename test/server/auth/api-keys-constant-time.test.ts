/**
 * Lookup compares the presented key's digest with EVERY stored digest, match or not, using
 * crypto.timingSafeEqual. node:crypto is wrapped (not replaced) to count the comparisons.
 */
import { describe, expect, it, vi } from 'vitest'

const calls = vi.hoisted(() => ({ count: 0 }))
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>()
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.count++
      return actual.timingSafeEqual(a, b)
    },
  }
})

const { ApiKeyRegistry } = await import('../../../src/server/auth/api-keys.ts')

describe('ApiKeyRegistry.lookup is constant-time across keys', () => {
  const keys = Array.from({ length: 7 }, (_, i) => `key-number-${i}-abcdef`)
  const registry = ApiKeyRegistry.fromKeys(keys)

  it.each([
    ['the first key', keys[0]],
    ['the last key', keys[6]],
    ['an unknown key', 'unknown-key'],
  ])('compares against all 7 digests for %s', (_label, key) => {
    calls.count = 0
    registry.lookup(key)
    expect(calls.count).toBe(7)
  })

  it('a missing key short-circuits (nothing secret to time)', () => {
    calls.count = 0
    expect(registry.lookup(undefined)).toBeUndefined()
    expect(calls.count).toBe(0)
  })
})
