/** Liveness and readiness: /healthz answers while the process runs; /readyz when state is readable. */
import type { FastifyInstance } from 'fastify'
import type { AppServices } from './app.ts'

export function registerHealthRoutes(app: FastifyInstance, services: AppServices): void {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (_req, reply) => {
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
