import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createPartnerRegistry, MAX_PARTNER_TOKEN_LENGTH, MIN_PARTNER_TOKEN_LENGTH, PartnerConfigError } from '../../../src/server/jsonrpc/index.ts'

const T1 = 'tok_one-0123456789abcdef'
const T2 = 'tok_two-0123456789abcdef'
const T3 = 'tok.three~0123456789ABCDEF'

describe('partner registry', () => {
  const registry = createPartnerRegistry([
    { partnerId: 'wallet-a', token: T1 },
    { partnerId: 'wallet-b', token: T2 },
    // rotation: a second token for the same partner
    { partnerId: 'wallet-a', token: T3 },
  ])

  it('resolves each token to its partner', () => {
    expect(registry.resolve(T1)).toBe('wallet-a')
    expect(registry.resolve(T2)).toBe('wallet-b')
    expect(registry.resolve(T3)).toBe('wallet-a')
  })

  it.each([
    ['empty', ''],
    ['a prefix', T1.slice(0, -1)],
    ['a longer string', `${T1}0`],
    ['a case variant', T1.toUpperCase()],
    ['a very long string', 'x'.repeat(10_000)],
    ['non-ASCII', 'tök-0123456789abcdef'],
  ])('does not resolve %s', (_name, token) => {
    expect(registry.resolve(token)).toBeUndefined()
  })

  it('keeps only digests: the tokens appear neither in JSON nor in inspect output', () => {
    const dump = `${JSON.stringify(registry)} ${inspect(registry, { depth: 10, showHidden: true })}`
    for (const token of [T1, T2, T3]) expect(dump).not.toContain(token)
  })

  it('an empty registry resolves nothing', () => {
    expect(createPartnerRegistry([]).resolve(T1)).toBeUndefined()
  })

  describe('configuration errors, which never quote a token', () => {
    const cases: [string, { partnerId: string; token: string }[], RegExp][] = [
      ['a short token', [{ partnerId: 'p', token: 'a'.repeat(MIN_PARTNER_TOKEN_LENGTH - 1) }], /16 to 100 characters/],
      ['a long token', [{ partnerId: 'p', token: 'a'.repeat(MAX_PARTNER_TOKEN_LENGTH + 1) }], /16 to 100 characters/],
      ['a token with a slash', [{ partnerId: 'p', token: 'abcdefgh/ijklmnopq' }], /letters, digits/],
      ['a token with a space', [{ partnerId: 'p', token: 'abcdefgh ijklmnopq' }], /letters, digits/],
      ['an empty partner id', [{ partnerId: ' ', token: T1 }], /partner id/],
      [
        'a duplicate token',
        [
          { partnerId: 'p', token: T1 },
          { partnerId: 'q', token: T1 },
        ],
        /entry 1 \(q\): token is already assigned/,
      ],
    ]
    it.each(cases)('%s', (_name, entries, message) => {
      let error: unknown
      try {
        createPartnerRegistry(entries)
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(PartnerConfigError)
      const text = (error as Error).message
      expect(text).toMatch(message)
      for (const { token } of entries) if (token.trim() !== '') expect(text).not.toContain(token)
    })

    it('reports every problem at once', () => {
      expect(() =>
        createPartnerRegistry([
          { partnerId: 'a', token: 'short' },
          { partnerId: 'b', token: 'has space in it ok' },
        ]),
      ).toThrow(/entry 0 \(a\)[\s\S]*entry 1 \(b\)/)
    })
  })
})
