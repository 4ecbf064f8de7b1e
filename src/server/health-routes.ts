/**
 * Liveness and readiness: /healthz answers while the process runs; /readyz when state is readable
 * and, where private submissions are served, their store accepts writes (a replica whose database
 * is down must leave the load balancer's rotation: it could acknowledge nothing).
 */
import type { FastifyInstance } from 'fastify'
import type { ChainStateSource } from '../chain/types.ts'
import { ref } from './openapi/components.ts'
import { ROOT_SERVERS } from './openapi/openapi.ts'

const healthzSchema = {
  operationId: 'getHealth',
  summary: 'Liveness',
  description: 'Answers while the process runs.',
  tags: ['operations'],
  servers: ROOT_SERVERS,
  response: { 200: { description: 'The process is running.', ...ref('Health') } },
}

const readyzSchema = {
  operationId: 'getReadiness',
  summary: 'Readiness',
  description:
    'Whether state can be read and, where private submissions are served, whether their store (LevelDB, or PostgreSQL with DATABASE_URL) can be written: the mode, chain id, head block and store. 503 when the upstream node or the store cannot be reached.',
  tags: ['operations'],
  servers: ROOT_SERVERS,
  response: {
    200: { description: 'Ready.', ...ref('Readiness') },
    503: { description: 'The upstream node or the submission store cannot be reached.', ...ref('Readiness') },
  },
}

/** What the health routes read (AppServices has it): the state source, for readiness and the head; the submission store, when submissions are served. */
export interface HealthRoutesDeps {
  chain: Pick<ChainStateSource, 'ready' | 'latest' | 'kind' | 'chainId'>
  submission?: { store: { ready?(): Promise<boolean> } }
}

export function registerHealthRoutes(app: FastifyInstance, services: HealthRoutesDeps): void {
  app.get('/healthz', { schema: healthzSchema }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: readyzSchema }, async (_req, reply) => {
    const chain = services.chain
    const store = services.submission?.store
    const [chainReady, storeReady] = await Promise.all([
      chain.ready().catch(() => false),
      store?.ready === undefined ? undefined : store.ready().catch(() => false),
    ])
    const ready = chainReady && storeReady !== false
    const head = chain.latest().block
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable',
      mode: chain.kind,
      chainId: chain.chainId.toString(),
      blockNumber: head.number.toString(),
      ...(storeReady === undefined ? {} : { submissionStore: storeReady ? 'ready' : 'unavailable' }),
    })
  })
}
