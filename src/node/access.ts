/**
 * Who may call the service: API keys of POST /v1/quote and partner tokens of the JSON-RPC
 * endpoints, as loadConfig resolved them (a bad or missing configuration never gets this far: it is
 * a ConfigError at load). Start-up's warnings about them (the development key and token in devnet
 * mode) go to `log`.
 */
import type { ServiceConfig } from '../config.ts'
import type { ApiKeyRegistry } from '../server/auth/api-keys.ts'
import type { PartnerRegistry } from '../server/jsonrpc/index.ts'

export interface ServiceAccess {
  apiKeys: ApiKeyRegistry
  partners: PartnerRegistry
}

export function resolveAccess(config: ServiceConfig, log: { warn(message: string): void }): ServiceAccess {
  for (const warning of config.access.warnings) log.warn(warning)
  return { apiKeys: config.access.apiKeys, partners: config.access.partners }
}
