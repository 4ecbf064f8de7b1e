import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { UNMATCHED_ROUTE, registerMetrics } from '../../../src/server/metrics/http-metrics.ts'
import { createMetricsRegistry, registerScrapedFamily } from '../../../src/server/metrics/registry.ts'
import { parseExposition, sampleValue } from './exposition.ts'

let app: FastifyInstance | undefined
afterEach(async () => {
  await app?.close()
  app = undefined
})

async function build() {
  app = Fastify({ logger: false })
  const registry = createMetricsRegistry({ defaultMetrics: false })
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
    const counted = (await metrics.requests.get()).values.map((v) => [v.labels, v.value])
    expect(counted).toEqual(
      expect.arrayContaining([
        [{ method: 'GET', route: '/items/:id', status_code: '200' }, 2],
        [{ method: 'GET', route: '/boom', status_code: '500' }, 1],
        [{ method: 'POST', route: '/v1/child', status_code: '201' }, 1],
        [{ method: 'GET', route: UNMATCHED_ROUTE, status_code: '404' }, 2],
      ]),
    )

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
    parseExposition(text)
  })

  it('observes latency per route in a histogram', async () => {
    const { app } = await build()
    for (let i = 0; i < 3; i++) await app.inject({ url: '/items/9' })
    const text = (await app.inject({ url: '/metrics' })).body
    const exposition = parseExposition(text)
    expect(exposition.types.get('http_request_duration_seconds')).toBe('histogram')
    expect(sampleValue(exposition, 'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/items/:id"}')).toBe(3)
    expect(sampleValue(exposition, 'http_request_duration_seconds_count{method="GET",route="/items/:id"}')).toBe(3)
    expect(sampleValue(exposition, 'http_request_duration_seconds_sum{method="GET",route="/items/:id"}')).toBeGreaterThan(0)
    // the default buckets, 5 ms to 10 s
    expect(exposition.samples.has('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/items/:id"}')).toBe(true)
    expect(exposition.samples.has('http_request_duration_seconds_bucket{le="10",method="GET",route="/items/:id"}')).toBe(true)
  })

  it('serves the families other modules registered in the same registry, read at scrape time', async () => {
    const { app, registry } = await build()
    const stats = { upstreamCalls: 12 }
    registerScrapedFamily(registry, { name: 'fork_upstream_calls_total', help: 'Upstream JSON-RPC calls.', type: 'counter' }, () => stats.upstreamCalls)
    expect((await app.inject({ url: '/metrics' })).body).toContain('fork_upstream_calls_total 12\n')
    stats.upstreamCalls = 13
    expect((await app.inject({ url: '/metrics' })).body).toContain('fork_upstream_calls_total 13\n')
  })

  it('serves the scrape path it is given', async () => {
    app = Fastify({ logger: false })
    registerMetrics(app, { registry: createMetricsRegistry({ defaultMetrics: false }), path: '/internal/metrics' })
    expect((await app.inject({ url: '/internal/metrics' })).statusCode).toBe(200)
    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(404)
  })
})
