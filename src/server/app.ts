/**
 * The HTTP front end, built by a function so tests can use inject() and a real listen alike.
 * The server depends on the domain; nothing in the domain imports the server.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { ServiceConfig } from '../config.ts'
import type { ChainStateSource } from '../chain/types.ts'
import { registerHealthRoutes } from './health-routes.ts'
import { jsonRpcLogSerializers, redactingNotFoundHandler } from './jsonrpc/index.ts'

export interface AppServices {
  chain: ChainStateSource
}

export async function buildApp(config: ServiceConfig, services: AppServices): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: config.bodyLimitBytes,
    logger: {
      level: config.logLevel,
      // secrets never reach the logs
      // the partner token sits in /rpc/{token}/... paths: request logs show it redacted
      serializers: jsonRpcLogSerializers,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-flashbots-signature"]'], censor: '[redacted]' },
    },
    // request ids for correlating logs; no trust in client-supplied ids
    genReqId: (() => {
      let n = 0
      return () => `req-${(++n).toString(36)}`
    })(),
  })
  // Fastify's default 404 logs the raw URL, which may carry a partner token
  app.setNotFoundHandler(redactingNotFoundHandler)
  registerHealthRoutes(app, services)
  return app
}
