import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../../src/config.ts'
import { DEV_PARTNER_TOKEN, resolvePartnerTokens } from '../../../src/server/jsonrpc/partner-tokens-config.ts'

const quiet = { warn: () => {} }
const A = 'alpha-token-0123456789'
const B = 'bravo-token-0123456789'

describe('resolvePartnerTokens', () => {
  it('reads partnerId:token pairs from PARTNER_TOKENS', () => {
    const r = resolvePartnerTokens({ mode: 'fork', partnerTokens: ` wallet:${A} , agg:${B} `, log: quiet })
    expect(r.resolve(A)).toBe('wallet')
    expect(r.resolve(B)).toBe('agg')
    expect(r.resolve(DEV_PARTNER_TOKEN)).toBeUndefined()
  })

  it('reads a file of lines with comments', () => {
    const r = resolvePartnerTokens({ mode: 'fork', partnerTokensFile: '/x', readFile: () => `# partners\nwallet:${A}\n\nagg:${B}\n`, log: quiet })
    expect(r.resolve(B)).toBe('agg')
  })

  it('gives the development token only on the devnet with nothing configured, with a warning', () => {
    const warnings: string[] = []
    const r = resolvePartnerTokens({ mode: 'devnet', log: { warn: (m) => warnings.push(m) } })
    expect(r.resolve(DEV_PARTNER_TOKEN)).toBe('dev')
    expect(warnings).toHaveLength(1)
    expect(() => resolvePartnerTokens({ mode: 'fork', log: quiet })).toThrow(ConfigError)
  })

  it('refuses both sources, empty sources, malformed entries, the dev token in fork mode, bad tokens, and never echoes a token', () => {
    const refuse = (o: Parameters<typeof resolvePartnerTokens>[0]) => {
      try {
        resolvePartnerTokens(o)
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError)
        return (err as Error).message
      }
      throw new Error('accepted')
    }
    expect(refuse({ mode: 'devnet', partnerTokens: `a:${A}`, partnerTokensFile: '/x', log: quiet })).toMatch(/both set/)
    expect(refuse({ mode: 'devnet', partnerTokens: ' , ', log: quiet })).toMatch(/one or more/)
    expect(refuse({ mode: 'devnet', partnerTokens: `${A}`, log: quiet })).toMatch(/partnerId:token/)
    expect(refuse({ mode: 'fork', partnerTokens: `dev:${DEV_PARTNER_TOKEN}`, log: quiet })).toMatch(/development partner token/)
    const short = refuse({ mode: 'devnet', partnerTokens: 'a:short', log: quiet })
    expect(short).toMatch(/16 to 100/)
    expect(short).not.toContain('short,')
    expect(refuse({ mode: 'devnet', partnerTokens: `a:${A},b:${A}`, log: quiet })).not.toContain(A)
    expect(refuse({ mode: 'devnet', partnerTokensFile: '/nope', readFile: () => { throw Object.assign(new Error('x'), { code: 'ENOENT' }) }, log: quiet })).toMatch(/ENOENT/)
  })
})
