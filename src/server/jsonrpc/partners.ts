/**
 * Partner-token authentication. Each partner gets its own RPC URLs with a secret token in the
 * path (`/rpc/<token>/backrun`, `/rpc/<token>/submit`), the way MEV Blocker or Merkle hand out
 * per-partner RPC URLs. Tokens come from configuration; this module keeps only their SHA-256
 * digests, so nothing it holds can leak a token into a log or an error message.
 */
import { hash, timingSafeEqual } from 'node:crypto'
import { BaseError } from '../../primitives/base-error.ts'

/** Maps a partner token to the partner's id. */
export interface PartnerRegistry {
  /** The partner id of `token`, or undefined when the token is unknown. */
  resolve(token: string): string | undefined
}

export interface PartnerTokenEntry {
  partnerId: string
  token: string
}

/** Shortest token accepted: 16 characters of the alphabet below carry at least 96 bits when random. */
export const MIN_PARTNER_TOKEN_LENGTH = 16
/** Longest token accepted: Fastify's default `maxParamLength` is 100; longer path segments never reach a route. */
export const MAX_PARTNER_TOKEN_LENGTH = 100
/** URL-unreserved characters (RFC 3986), so a token never needs percent-encoding in a path. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~-]+$/

/** Partner tokens the service refuses to start with: every problem, by entry, never the token. */
export class PartnerConfigError extends BaseError {
  override readonly name = 'PartnerConfigError'
}

interface DigestEntry {
  partnerId: string
  digest: Buffer
}

/**
 * One-shot hashing (node:crypto's `hash`, Node >= 20.12): every JSON-RPC request resolves its token,
 * and a Hash object per request (createHash, update, digest) was ~3% of the main thread's profile
 * per acknowledgement under bench:submit; the digest is the same.
 */
function sha256(token: string): Buffer {
  return hash('sha256', token, 'buffer')
}

/**
 * A registry over fixed entries. One partner may have several tokens (rotation: add the new one,
 * remove the old one later); a token may belong to only one partner.
 *
 * Lookup hashes the candidate and compares it with every stored digest using
 * crypto.timingSafeEqual, without stopping at a match: equal-length digests mean the time
 * reveals neither the length of a token nor how much of it matched, and the time is the same
 * whichever entry matches.
 *
 * @throws PartnerConfigError on an empty partner id, a token that is too short, too long or has
 *   characters outside [A-Za-z0-9._~-], or a token given twice. Messages name the partner and the
 *   entry's position, never the token.
 */
export function createPartnerRegistry(entries: Iterable<PartnerTokenEntry>): PartnerRegistry {
  const stored: DigestEntry[] = []
  const problems: string[] = []
  let index = 0
  for (const { partnerId, token } of entries) {
    const where = `partner entry ${index} (${typeof partnerId === 'string' && partnerId !== '' ? partnerId : 'no id'})`
    index++
    if (typeof partnerId !== 'string' || partnerId.trim() === '') problems.push(`${where}: partner id must be a non-empty string`)
    if (typeof token !== 'string') {
      problems.push(`${where}: token must be a string`)
      continue
    }
    if (token.length < MIN_PARTNER_TOKEN_LENGTH || token.length > MAX_PARTNER_TOKEN_LENGTH) {
      problems.push(`${where}: token must be ${MIN_PARTNER_TOKEN_LENGTH} to ${MAX_PARTNER_TOKEN_LENGTH} characters long`)
      continue
    }
    if (!TOKEN_PATTERN.test(token)) {
      problems.push(`${where}: token may contain only letters, digits and . _ ~ -`)
      continue
    }
    const digest = sha256(token)
    if (stored.some((e) => e.digest.equals(digest))) {
      problems.push(`${where}: token is already assigned to another entry`)
      continue
    }
    stored.push({ partnerId, digest })
  }
  if (problems.length > 0) throw new PartnerConfigError('invalid partner tokens', { metaMessages: problems })

  return {
    resolve(token: string): string | undefined {
      const candidate = sha256(token)
      let found: string | undefined
      for (const entry of stored) {
        // no early exit: every digest is compared on every lookup
        if (timingSafeEqual(candidate, entry.digest) && found === undefined) found = entry.partnerId
      }
      return found
    },
  }
}
