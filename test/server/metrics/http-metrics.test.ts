import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { UNMATCHED_ROUTE, registerMetrics } from '../../../src/server/metrics/http-metrics.ts'
import { MetricsRegistry } from '../../../src/server/metrics/registry.ts'

let app: FastifyInstance | undefined
afterEach(async () => {
  await app?.close()
  app = undefined
})

async function build() {
  app = Fastify({ logger: false })
  const registry = new MetricsRegistry()
  const metrics = registerMetrics(app, { registry })
  app.get('/items/:id', async () => ({ ok: true }))
  app.get('/boom', async () => {
    throw new Error('boom')
  })
  // a route inside an encapsulated plugin is still counted (the hook sits on the root)
  await app.register(async (child) => {
    child.post('/v1/child', async (_req, reply) => reply.code(201).send({}))
  })
  await app.ready()
  return { app, registry, metrics }
}

describe('HTTP metrics and GET /metrics', () => {
  it('counts requests by method, route pattern (never the raw URL) and status', async () => {
    const { app, metrics } = await build()
    await app.inject({ url: '/items/1' })
    await app.inject({ url: '/items/2?secret=token' })
    await app.inject({ url: '/boom' })
    await app.inject({ method: 'POST', url: '/v1/child' })
    await app.inject({ url: '/does/not/exist' })
    await app.inject({ url: '/another/missing/path' })
    expect(metrics.requests.get({ method: 'GET', route: '/items/:id', status_code: '200' })).toBe(2)
    expect(metrics.requests.get({ method: 'GET', route: '/boom', status_code: '500' })).toBe(1)
    expect(metrics.requests.get({ method: 'POST', route: '/v1/child', status_code: '201' })).toBe(1)
    expect(metrics.requests.get({ method: 'GET', route: UNMATCHED_ROUTE, status_code: '404' })).toBe(2)

    const res = await app.inject({ url: '/metrics' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = res.body
    expect(text).toContain('# TYPE http_requests_total counter\n')
    expect(text).toContain('http_requests_total{method="GET",route="/items/:id",status_code="200"} 2\n')
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status_code="404"} 2\n')
    expect(text).not.toContain('/items/1')
    expect(text).not.toContain('secret')
    expect(text).not.toContain('/does/not/exist')
  })

  it('observes latency per route in a histogram', async () => {
    const { app, metrics } = await build()
    for (let i = 0; i < 3; i++) await app.inject({ url: '/items/9' })
    const snap = metrics.duration.snapshot({ method: 'GET', route: '/items/:id' })
    expect(snap.count).toBe(3)
    expect(snap.buckets.at(-1)).toBe(3)
    expect(snap.sum).toBeGreaterThan(0)
    const text = (await app.inject({ url: '/metrics' })).body
    expect(text).toContain('# TYPE http_request_duration_seconds histogram\n')
    expect(text).toContain('http_request_duration_seconds_bucket{method="GET",route="/items/:id",le="+Inf"} 3\n')
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/items/:id"} 3\n')
  })

  it('exports collector samples registered by other modules', async () => {
    const { app, registry } = await build()
    const stats = { upstreamCalls: 12, hits: 30, misses: 4 }
    registry.registerCollector(() => [
      { name: 'fork_upstream_calls_total', help: 'Upstream JSON-RPC calls.', type: 'counter', samples: [{ value: stats.upstreamCalls }] },
      {
        name: 'fork_cache_lookups_total',
        help: 'Fork state cache lookups by result.',
        type: 'counter',
        samples: [
          { labels: { result: 'hit' }, value: stats.hits },
          { labels: { result: 'miss' }, value: stats.misses },
        ],
      },
    ])
    const text = (await app.inject({ url: '/metrics' })).body
    expect(text).toContain('fork_upstream_calls_total 12\n')
    expect(text).toContain('fork_cache_lookups_total{result="hit"} 30\n')
    expect(text).toContain('fork_cache_lookups_total{result="miss"} 4\n')
  })
})
