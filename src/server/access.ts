/**
 * Who may call the service, from configuration: API keys of POST /v1/quote and partner tokens of
 * the JSON-RPC endpoints. Throws ConfigError (the service does not start) on a bad or missing
 * configuration; warnings (the development key and token in devnet mode) go to `log`.
 */
import type { ServiceConfig } from '../config.ts'
import { resolveApiKeys, type ApiKeyRegistry } from './auth/api-keys.ts'
import type { PartnerRegistry } from './jsonrpc/index.ts'
import { resolvePartnerTokens } from './jsonrpc/partner-tokens-config.ts'

export interface ServiceAccess {
  apiKeys: ApiKeyRegistry
  partners: PartnerRegistry
}

export function resolveAccess(config: ServiceConfig, log: { warn(message: string): void }): ServiceAccess {
  const mode = config.upstreamRpcUrl === undefined ? 'devnet' : 'fork'
  return {
    apiKeys: resolveApiKeys({ mode, apiKeys: config.apiKeys, apiKeysFile: config.apiKeysFile, log }),
    partners: resolvePartnerTokens({ mode, partnerTokens: config.partnerTokens, partnerTokensFile: config.partnerTokensFile, log }),
  }
}
