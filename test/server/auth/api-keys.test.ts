import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../../src/config.ts'
import { ApiKeyRegistry, DEV_API_KEY, apiKeyDigest, parseApiKeyDigestFile, resolveApiKeys } from '../../../src/server/auth/api-keys.ts'

const K1 = 'k1-3f9a8c7e6d5b4a39'
const K2 = 'k2-0b1c2d3e4f5a6b7c'

function captureLog() {
  const warnings: string[] = []
  return { warnings, log: { warn: (m: string) => warnings.push(m) } }
}

describe('ApiKeyRegistry', () => {
  it('accepts configured keys and returns a stable, non-secret 8-hex id', () => {
    const r = ApiKeyRegistry.fromKeys([K1, K2])
    const id1 = r.lookup(K1)
    expect(id1).toMatch(/^[0-9a-f]{8}$/)
    expect(id1).toBe(apiKeyDigest(K1).slice(0, 8))
    expect(r.lookup(K2)).toBe(apiKeyDigest(K2).slice(0, 8))
    expect(r.lookup(K1)).toBe(id1)
    expect(ApiKeyRegistry.fromKeys([K2, K1]).lookup(K1)).toBe(id1)
    expect(id1).not.toContain(K1.slice(0, 4))
    expect(r.keyIds()).toEqual([apiKeyDigest(K1).slice(0, 8), apiKeyDigest(K2).slice(0, 8)])
  })

  it('rejects unknown, empty, missing and near-miss keys', () => {
    const r = ApiKeyRegistry.fromKeys([K1])
    for (const k of [undefined, '', 'nope', K1 + 'x', K1.slice(0, -1), ` ${K1}`, K1.toUpperCase()]) expect(r.lookup(k), String(k)).toBeUndefined()
  })

  it('from digests: the same ids as from raw keys; duplicates merge', () => {
    const fromDigests = ApiKeyRegistry.fromDigests([apiKeyDigest(K1), apiKeyDigest(K1).toUpperCase(), apiKeyDigest(K2)])
    expect(fromDigests.size).toBe(2)
    expect(fromDigests.lookup(K1)).toBe(ApiKeyRegistry.fromKeys([K1]).lookup(K1))
    expect(() => ApiKeyRegistry.fromDigests(['abc'])).toThrow(/64 hex/)
  })
})

describe('parseApiKeyDigestFile', () => {
  it('reads one digest per line, with # comments and blank lines', () => {
    const text = `# partner keys\n${apiKeyDigest(K1)}  # partner A\n\n   ${apiKeyDigest(K2).toUpperCase()}\r\n# end\n`
    expect(parseApiKeyDigestFile(text)).toEqual([apiKeyDigest(K1), apiKeyDigest(K2)])
  })

  it('reports every malformed line by number, without echoing its content', () => {
    const text = `${apiKeyDigest(K1)}\nraw-secret-key-pasted-by-mistake\n${'a'.repeat(63)}\n`
    let error: unknown
    try {
      parseApiKeyDigestFile(text)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).problems).toEqual([
      'API_KEYS_FILE line 2: expected a SHA-256 digest (64 hex characters)',
      'API_KEYS_FILE line 3: expected a SHA-256 digest (64 hex characters)',
    ])
    expect((error as Error).message).not.toContain('raw-secret')
  })
})

describe('resolveApiKeys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'api-keys-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('devnet without keys: only the documented dev key, with a WARN that does not print it', () => {
    const { warnings, log } = captureLog()
    const r = resolveApiKeys({ mode: 'devnet', log })
    expect(DEV_API_KEY).toBe('dev-insecure-key')
    expect(r.size).toBe(1)
    expect(r.lookup(DEV_API_KEY)).toBeDefined()
    expect(r.lookup('anything-else')).toBeUndefined()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/API_KEYS.*API_KEYS_FILE/)
    expect(warnings[0]).toMatch(/development key/)
    expect(warnings[0]).not.toContain(DEV_API_KEY)
    // blank values count as not set
    expect(resolveApiKeys({ mode: 'devnet', apiKeys: '  ', apiKeysFile: '', log }).lookup(DEV_API_KEY)).toBeDefined()
  })

  it('fork mode without keys refuses to start, naming API_KEYS / API_KEYS_FILE', () => {
    const { warnings, log } = captureLog()
    expect(() => resolveApiKeys({ mode: 'fork', log })).toThrow(ConfigError)
    expect(() => resolveApiKeys({ mode: 'fork', log })).toThrow(/API_KEYS or API_KEYS_FILE/)
    expect(warnings).toEqual([])
  })

  it('API_KEYS: comma-separated, trimmed, empty entries skipped; the dev key is then not accepted', () => {
    const { warnings, log } = captureLog()
    const r = resolveApiKeys({ mode: 'fork', apiKeys: ` ${K1} ,,${K2}, `, log })
    expect(r.size).toBe(2)
    expect(r.lookup(K1)).toBeDefined()
    expect(r.lookup(K2)).toBeDefined()
    expect(r.lookup(DEV_API_KEY)).toBeUndefined()
    expect(warnings).toEqual([])
    expect(() => resolveApiKeys({ mode: 'devnet', apiKeys: ' , ', log })).toThrow(/API_KEYS/)
  })

  it('API_KEYS_FILE: digests from the file', () => {
    const { log } = captureLog()
    const file = join(dir, 'keys.txt')
    writeFileSync(file, `# keys\n${apiKeyDigest(K1)}\n`)
    const r = resolveApiKeys({ mode: 'fork', apiKeysFile: file, log })
    expect(r.lookup(K1)).toBeDefined()
    expect(r.lookup(K2)).toBeUndefined()
  })

  it('API_KEYS_FILE problems stop the start: unreadable, empty, malformed', () => {
    const { log } = captureLog()
    expect(() => resolveApiKeys({ mode: 'devnet', apiKeysFile: join(dir, 'missing.txt'), log })).toThrow(/cannot read the file \(ENOENT\)/)
    const empty = join(dir, 'empty.txt')
    writeFileSync(empty, '# nothing yet\n\n')
    expect(() => resolveApiKeys({ mode: 'devnet', apiKeysFile: empty, log })).toThrow(/lists no key digests/)
    const bad = join(dir, 'bad.txt')
    writeFileSync(bad, 'not-a-digest\n')
    expect(() => resolveApiKeys({ mode: 'devnet', apiKeysFile: bad, log })).toThrow(/line 1/)
  })

  it('both sources set is refused; fork mode refuses the dev key in either source', () => {
    const { log } = captureLog()
    expect(() => resolveApiKeys({ mode: 'devnet', apiKeys: K1, apiKeysFile: '/x', log })).toThrow(/both set/)
    expect(() => resolveApiKeys({ mode: 'fork', apiKeys: `${K1},${DEV_API_KEY}`, log })).toThrow(/development key/)
    expect(() => resolveApiKeys({ mode: 'fork', apiKeysFile: 'k', readFile: () => apiKeyDigest(DEV_API_KEY), log })).toThrow(/development key/)
    // devnet may list it explicitly
    expect(resolveApiKeys({ mode: 'devnet', apiKeys: DEV_API_KEY, log }).lookup(DEV_API_KEY)).toBeDefined()
  })
})
