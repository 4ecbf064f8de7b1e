/**
 * The app as npm start composes it (buildApp), over stand-ins for the domain: an empty devnet
 * chain, quote and backrun services that are never reached, and a submission status store that
 * knows nothing unless told. For the tests of the HTTP front end as a whole.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { parseGenesis } from '../../src/chain/memory/genesis.ts'
import { loadConfig } from '../../src/node/config.ts'
import { buildApp } from '../../src/server/app.ts'
import { ApiKeyRegistry } from '../../src/server/auth/api-keys.ts'
import { createPartnerRegistry } from '../../src/server/jsonrpc/index.ts'
import type { SubmissionStatusStore } from '../../src/server/rpc/submission-status-route.ts'

export const FULL_APP_TOKEN = 'front-door-partner-tok-0123'
export const FULL_APP_API_KEY = 'front-door-api-key-0123456789'

/**
 * `loggerInstance`: a logger made with serviceLoggerOptions, to read what the app logs; default: silent.
 * `env`: configuration variables beside LOG_LEVEL=silent (as loadConfig reads them).
 */
export async function buildFullApp(
  options: { store?: SubmissionStatusStore; loggerInstance?: FastifyBaseLogger; env?: Record<string, string> } = {},
): Promise<FastifyInstance> {
  const chain = new DevnetStateSource(parseGenesis({ config: { chainId: 31337 }, alloc: {} }))
  const quote = { quote: () => Promise.reject(new Error('not used')) }
  const backrun = { backrun: () => Promise.reject(new Error('not used')) }
  const app = await buildApp(
    loadConfig({ LOG_LEVEL: 'silent', ...options.env }),
    {
      chain,
      quote,
      backrun,
      partners: createPartnerRegistry([{ partnerId: 'p', token: FULL_APP_TOKEN }]),
      apiKeys: ApiKeyRegistry.fromKeys([FULL_APP_API_KEY]),
      submission: {
        acceptor: { accept: () => Promise.reject(new Error('not used')) },
        store: options.store ?? { findForPartner: async () => [] },
        decode: { chainId: 31337n, hardfork: 'prague' },
        limits: {},
      },
    },
    options.loggerInstance === undefined ? {} : { loggerInstance: options.loggerInstance },
  )
  await app.ready()
  return app
}
