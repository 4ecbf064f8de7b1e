/**
 * bench:soak's SOAK_CHAIN=process: the devnet chain and its local builder in a process of their own
 * (scripts/devnet-chain.ts, as npm run cluster starts it), and the service in fork mode against it
 * (UPSTREAM_RPC_URL and its relay both the builder's JSON-RPC), as in production, where the chain is
 * never in the service's process. The soak then measures the service's memory without the chain's
 * state, block building, receipts and bundle records, which the default (embedded) setup holds in
 * the service's own heap.
 *
 * Fork mode refuses the documented development key and token, so this setup makes its own per run.
 */
import { randomBytes } from 'node:crypto'
import type { ChildProcess } from 'node:child_process'
import { startDevnetChain, stopProcess } from '../../test/support/cluster.ts'
import { devnetForkEnv, loadRegistry } from '../../test/support/devnet.ts'
import { DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'

export type SoakChainMode = 'embedded' | 'process'

/** SOAK_CHAIN: `embedded` (default: the devnet inside the service, as `npm start` runs it) or `process`. */
export function soakChainMode(raw: string | undefined): SoakChainMode {
  if (raw === undefined || raw === '' || raw === 'embedded') return 'embedded'
  if (raw === 'process') return 'process'
  throw new RangeError(`SOAK_CHAIN must be "embedded" or "process", got ${JSON.stringify(raw)}`)
}

/** What the soak's requests authenticate with. */
export interface SoakCredentials {
  apiKey: string
  partnerToken: string
}

export const EMBEDDED_CREDENTIALS: SoakCredentials = { apiKey: DEV_API_KEY, partnerToken: DEV_PARTNER_TOKEN }

export interface SoakChain {
  /** the builder's JSON-RPC: the service's upstream and relay, and where the soak reads nonces and heads */
  url: string
  pid: number
  child: ChildProcess
  /** the service's environment for fork mode over this chain */
  serviceEnv: Record<string, string>
  credentials: SoakCredentials
  stop(): Promise<void>
}

/**
 * Starts the chain process. `blockTimeMs`: how often it builds a block (the service's default,
 * 12 s, unless the soak sets SOAK_BLOCK_TIME_MS).
 */
export async function startSoakChain(blockTimeMs: number): Promise<SoakChain> {
  const registry = loadRegistry()
  const blockTimeSeconds = String(Math.max(1, Math.round(blockTimeMs / 1000)))
  const chain = await startDevnetChain({ LOG_LEVEL: 'warn', LOCAL_BUILDER_PORT: '0', LOCAL_BUILDER_BLOCK_TIME_MS: String(blockTimeMs), BLOCK_TIME_SECONDS: blockTimeSeconds }, 'inherit')
  const credentials: SoakCredentials = { apiKey: `soak-api-key-${randomBytes(12).toString('hex')}`, partnerToken: `soak-partner-${randomBytes(12).toString('hex')}` }
  // every searcher key of the devnet, as the embedded devnet's service signs with (src/node/submission.ts)
  const searcherKeys = (registry.devAccounts.searcherIndexes ?? []).map((index) => registry.devAccounts.accounts.find((a) => a.index === index)?.privateKey)
  if (searcherKeys.length === 0 || searcherKeys.some((k) => k === undefined)) {
    await stopProcess(chain.child)
    throw new Error('the devnet registry names no searcher keys')
  }
  const serviceEnv: Record<string, string> = {
    ...devnetForkEnv(registry),
    UPSTREAM_RPC_URL: chain.url,
    RELAYS: JSON.stringify([{ name: 'devnet-builder', url: chain.url, bundleStats: true, hashReference: 'eth_sendBundle' }]),
    API_KEYS: credentials.apiKey,
    PARTNER_TOKENS: `soak:${credentials.partnerToken}`,
    SEARCHER_PRIVATE_KEY: '',
    SEARCHER_PRIVATE_KEYS: (searcherKeys as string[]).join(','),
    BLOCK_TIME_SECONDS: blockTimeSeconds,
  }
  return { url: chain.url, pid: chain.pid, child: chain.child, serviceEnv, credentials, stop: () => stopProcess(chain.child) }
}
