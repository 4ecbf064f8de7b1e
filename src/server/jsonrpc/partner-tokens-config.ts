/**
 * The partner registry from configuration, or a ConfigError that stops the service from starting:
 * PARTNER_TOKENS (`partnerId:token` pairs, comma-separated) or PARTNER_TOKENS_FILE (one
 * `partnerId:token` per line, `#` comments). Mirrors the API-key rules of the quote endpoint:
 *
 * - both configured: refused;
 * - a configured source with no entry: refused;
 * - neither configured: devnet accepts only DEV_PARTNER_TOKEN (partner id `dev`) with a warning;
 *   fork mode refuses to start;
 * - fork mode refuses DEV_PARTNER_TOKEN among configured tokens: it is public.
 *
 * Token format and uniqueness are checked by createPartnerRegistry; messages never echo a token.
 */
import { readFileSync } from 'node:fs'
import { ConfigError } from '../../config.ts'
import { createPartnerRegistry, PartnerConfigError, type PartnerRegistry, type PartnerTokenEntry } from './partners.ts'

/** The documented development partner token: devnet only, and only while no token is configured. */
export const DEV_PARTNER_TOKEN = 'dev-partner-token-insecure'
export const DEV_PARTNER_ID = 'dev'

export interface ResolvePartnerTokensOptions {
  mode: 'devnet' | 'fork'
  /** PARTNER_TOKENS */
  partnerTokens?: string
  /** PARTNER_TOKENS_FILE */
  partnerTokensFile?: string
  log: { warn(message: string): void }
  /** injectable for tests; defaults to readFileSync(path, 'utf8') */
  readFile?: (path: string) => string
}

function parseEntries(items: string[], source: string, problems: string[]): PartnerTokenEntry[] {
  const entries: PartnerTokenEntry[] = []
  items.forEach((item, i) => {
    const colon = item.indexOf(':')
    if (colon <= 0 || colon === item.length - 1) {
      problems.push(`${source}: entry ${i + 1} is not of the form partnerId:token`)
      return
    }
    entries.push({ partnerId: item.slice(0, colon).trim(), token: item.slice(colon + 1).trim() })
  })
  return entries
}

export function resolvePartnerTokens(options: ResolvePartnerTokensOptions): PartnerRegistry {
  const raw = options.partnerTokens?.trim() ? options.partnerTokens : undefined
  const file = options.partnerTokensFile?.trim() ? options.partnerTokensFile.trim() : undefined
  if (raw !== undefined && file !== undefined) throw new ConfigError(['PARTNER_TOKENS and PARTNER_TOKENS_FILE are both set: configure exactly one'])

  const problems: string[] = []
  let entries: PartnerTokenEntry[]
  if (raw !== undefined) {
    entries = parseEntries(raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0), 'PARTNER_TOKENS', problems)
  } else if (file !== undefined) {
    let text: string
    try {
      text = (options.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(file)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | undefined)?.code
      throw new ConfigError([`PARTNER_TOKENS_FILE=${JSON.stringify(file)}: cannot read the file${code ? ` (${code})` : ''}`])
    }
    const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith('#'))
    entries = parseEntries(lines, 'PARTNER_TOKENS_FILE', problems)
  } else {
    if (options.mode === 'fork') throw new ConfigError(['PARTNER_TOKENS or PARTNER_TOKENS_FILE: required in fork mode (UPSTREAM_RPC_URL is set)'])
    options.log.warn(`no partner tokens configured: the JSON-RPC endpoints accept only the public development token ${DEV_PARTNER_TOKEN} (devnet only)`)
    return createPartnerRegistry([{ partnerId: DEV_PARTNER_ID, token: DEV_PARTNER_TOKEN }])
  }
  if (problems.length === 0 && entries.length === 0) problems.push(`${raw !== undefined ? 'PARTNER_TOKENS' : 'PARTNER_TOKENS_FILE'}: expected one or more partnerId:token entries`)
  if (options.mode === 'fork' && entries.some((e) => e.token === DEV_PARTNER_TOKEN)) problems.push('the documented development partner token is not accepted in fork mode')
  if (problems.length > 0) throw new ConfigError(problems)
  try {
    return createPartnerRegistry(entries)
  } catch (err) {
    if (err instanceof PartnerConfigError) throw new ConfigError([err.message])
    throw err
  }
}
