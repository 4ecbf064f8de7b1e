/**
 * API keys for the quote operation (spec section 5: header X-API-Key, 401 UNAUTHORIZED).
 *
 * Keys are held only as SHA-256 digests. The digest file (API_KEYS_FILE) lets operators deploy
 * without the raw keys ever touching the host; raw keys in API_KEYS are hashed at start and
 * dropped. A presented key is hashed and compared with every stored digest in constant time.
 *
 * Each key has a stable, non-secret id (the first hex characters of its digest) used for rate
 * limiting and logs, so neither the store nor a log line ever holds key material. Operators can
 * map an id back to its line in the digest file by prefix.
 */
import { hash, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ConfigError } from '../../config-error.ts'

/**
 * The documented development key, accepted only in devnet mode when no keys are configured.
 * It is public by definition; fork mode refuses it.
 */
export const DEV_API_KEY = 'dev-insecure-key'

const DIGEST_HEX = /^[0-9a-fA-F]{64}$/
/** id length in hex characters; grows only if two configured keys share a prefix */
const KEY_ID_MIN_HEX = 8

/** one-shot (no Hash object per call): lookup runs on every authenticated request */
function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer')
}

export class ApiKeyRegistry {
  private readonly digests: Buffer[]
  private readonly ids: string[]

  /** digests: 32-byte SHA-256 values of the accepted keys (duplicates are merged) */
  private constructor(digests: Buffer[]) {
    const unique = new Map<string, Buffer>()
    for (const d of digests) {
      // a programming error, not a configuration one: configured digests are checked (ConfigError) before they get here
      if (d.length !== 32) throw new Error('API key digest must be 32 bytes')
      unique.set(d.toString('hex'), d)
    }
    this.digests = [...unique.values()]
    const hex = [...unique.keys()]
    // ids must be distinct or two keys would share a rate-limit bucket; an 8-hex collision is
    // unlikely (~n^2 / 2^33) but cheap to rule out
    let len = KEY_ID_MIN_HEX
    while (new Set(hex.map((h) => h.slice(0, len))).size !== hex.length) len += 4
    this.ids = hex.map((h) => h.slice(0, len))
  }

  static fromKeys(keys: readonly string[]): ApiKeyRegistry {
    return new ApiKeyRegistry(keys.map(sha256))
  }

  /** hexDigests: lowercase or uppercase 64-hex SHA-256 digests of the keys */
  static fromDigests(hexDigests: readonly string[]): ApiKeyRegistry {
    return new ApiKeyRegistry(
      hexDigests.map((h) => {
        if (!DIGEST_HEX.test(h)) throw new Error('API key digest must be 64 hex characters')
        return Buffer.from(h, 'hex')
      }),
    )
  }

  get size(): number {
    return this.digests.length
  }

  /** the non-secret ids of all configured keys */
  keyIds(): readonly string[] {
    return this.ids
  }

  /** The id of the key, or undefined when it is missing or not accepted. */
  lookup(presented: string | undefined): string | undefined {
    if (presented === undefined || presented.length === 0) return undefined
    const digest = sha256(presented)
    // Compare against EVERY stored digest (no early exit), so the time taken does not reveal
    // which key, or how many keys, were tried before a match. Hashing first makes the compared
    // buffers fixed-length, which timingSafeEqual requires, and means any residual timing signal
    // concerns the digest, not the key itself.
    let found = -1
    for (let i = 0; i < this.digests.length; i++) {
      const equal = timingSafeEqual(digest, this.digests[i])
      found = equal ? i : found
    }
    return found >= 0 ? this.ids[found] : undefined
  }
}

/** SHA-256 hex digest of a key: the line an operator puts in API_KEYS_FILE. */
export function apiKeyDigest(key: string): string {
  return sha256(key).toString('hex')
}

/**
 * Parse the digest file: one 64-hex SHA-256 digest per line; '#' starts a comment (whole line
 * or trailing); blank lines ignored. Every malformed line is reported, with its number, at once.
 */
export function parseApiKeyDigestFile(text: string, fileName = 'API_KEYS_FILE'): string[] {
  const digests: string[] = []
  const problems: string[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') return
    if (DIGEST_HEX.test(line)) digests.push(line.toLowerCase())
    // the line could be a raw key pasted by mistake: never echo it
    else problems.push(`${fileName} line ${i + 1}: expected a SHA-256 digest (64 hex characters)`)
  })
  if (problems.length > 0) throw new ConfigError(problems)
  return digests
}

export interface ResolveApiKeysOptions {
  mode: 'devnet' | 'fork'
  /** API_KEYS: comma-separated raw keys */
  apiKeys?: string
  /** API_KEYS_FILE: path of a file of SHA-256 hex digests */
  apiKeysFile?: string
  log: { warn(message: string): void }
  /** injectable for tests; defaults to readFileSync(path, 'utf8') */
  readFile?: (path: string) => string
}

/**
 * The key registry from configuration, or a ConfigError that stops the service from starting.
 *
 * - API_KEYS and API_KEYS_FILE together: refused (which one wins would be a guess).
 * - A configured source that yields no key (empty list, empty file): refused; an explicit
 *   configuration that lets nobody in is a mistake, not a request for the dev key.
 * - Neither configured: devnet accepts only DEV_API_KEY and logs a warning; fork mode refuses
 *   to start, since a fork serves real chain data.
 * - Fork mode also refuses DEV_API_KEY among configured keys: it is public.
 */
export function resolveApiKeys(options: ResolveApiKeysOptions): ApiKeyRegistry {
  const rawKeys = options.apiKeys?.trim() ? options.apiKeys : undefined
  const file = options.apiKeysFile?.trim() ? options.apiKeysFile.trim() : undefined

  if (rawKeys !== undefined && file !== undefined) {
    throw new ConfigError(['API_KEYS and API_KEYS_FILE are both set: configure exactly one'])
  }

  if (rawKeys !== undefined) {
    const keys = rawKeys
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k.length > 0)
    if (keys.length === 0) throw new ConfigError(['API_KEYS: expected one or more comma-separated keys'])
    if (options.mode === 'fork' && keys.includes(DEV_API_KEY)) {
      throw new ConfigError(['API_KEYS: the documented development key is not accepted in fork mode'])
    }
    return ApiKeyRegistry.fromKeys(keys)
  }

  if (file !== undefined) {
    let text: string
    try {
      text = (options.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(file)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | undefined)?.code
      throw new ConfigError([`API_KEYS_FILE=${JSON.stringify(file)}: cannot read the file${code ? ` (${code})` : ''}`])
    }
    const digests = parseApiKeyDigestFile(text)
    if (digests.length === 0) throw new ConfigError([`API_KEYS_FILE=${JSON.stringify(file)}: the file lists no key digests`])
    if (options.mode === 'fork' && digests.includes(apiKeyDigest(DEV_API_KEY))) {
      throw new ConfigError(['API_KEYS_FILE: the documented development key is not accepted in fork mode'])
    }
    return ApiKeyRegistry.fromDigests(digests)
  }

  if (options.mode === 'fork') {
    throw new ConfigError(['API_KEYS or API_KEYS_FILE is required in fork mode: the quote endpoint refuses to run without configured API keys'])
  }
  // the key value itself is not logged: it is documented (DEV_API_KEY), and key material stays
  // out of logs as a rule, even public key material
  options.log.warn('API_KEYS and API_KEYS_FILE are not set: devnet accepts only the documented development key (DEV_API_KEY); never expose this instance')
  return ApiKeyRegistry.fromKeys([DEV_API_KEY])
}
