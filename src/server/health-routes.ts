/** Liveness and readiness: /healthz answers while the process runs; /readyz when state is readable. */
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
  description: 'Whether state can be read: the mode, chain id and head block. 503 when the upstream node cannot be reached.',
  tags: ['operations'],
  servers: ROOT_SERVERS,
  response: {
    200: { description: 'Ready.', ...ref('Readiness') },
    503: { description: 'The upstream node cannot be reached.', ...ref('Readiness') },
  },
}

/** What the health routes read (AppServices has it): the state source, for readiness and the head. */
export interface HealthRoutesDeps {
  chain: Pick<ChainStateSource, 'ready' | 'latest' | 'kind' | 'chainId'>
}

export function registerHealthRoutes(app: FastifyInstance, services: HealthRoutesDeps): void {
  app.get('/healthz', { schema: healthzSchema }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: readyzSchema }, async (_req, reply) => {
    const chain = services.chain
    const ready = await chain.ready().catch(() => false)
    const head = chain.latest().block
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable',
      mode: chain.kind,
      chainId: chain.chainId.toString(),
      blockNumber: head.number.toString(),
    })
  })
}
