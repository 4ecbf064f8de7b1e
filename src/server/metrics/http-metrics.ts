/**
 * HTTP request metrics and the GET /metrics scrape endpoint.
 *
 * Call registerMetrics on the ROOT instance before any route is registered: the onResponse hook
 * is added directly to the instance it is given (not inside a child plugin) so that it sees
 * every route of the application, including those registered inside encapsulated plugins.
 *
 * Series are labelled with the route PATTERN (request.routeOptions.url, e.g. /v1/quote), never
 * the raw URL: raw URLs carry query strings and arbitrary client paths, an unbounded label
 * cardinality a client could use to exhaust memory. Requests that matched no route share the
 * single label value UNMATCHED_ROUTE.
 */
import type { FastifyInstance } from 'fastify'
import { Counter, Histogram, type Registry } from 'prom-client'

export const UNMATCHED_ROUTE = 'unmatched'

export interface MetricsPluginOptions {
  registry: Registry
  /** path of the scrape endpoint; default /metrics */
  path?: string
}

export interface HttpMetrics {
  requests: Counter<'method' | 'route' | 'status_code'>
  duration: Histogram<'method' | 'route'>
}

/** Registers the HTTP metrics and the scrape endpoint. Returns the metrics for tests and reuse. */
export function registerMetrics(app: FastifyInstance, options: MetricsPluginOptions): HttpMetrics {
  const { registry } = options
  const path = options.path ?? '/metrics'
  const metrics: HttpMetrics = {
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      registers: [registry],
    }),
    // prom-client's default buckets (5 ms to 10 s), which suit HTTP latencies
    duration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request arrival to the end of the response, by method and route pattern.',
      labelNames: ['method', 'route'],
      registers: [registry],
    }),
  }

  // onResponse runs after the response is written, for every outcome (errors, 404s, hooks that
  // replied early), so it is the one place that sees the final status code. A callback hook: an
  // async one costs the main thread a promise and a microtask per request (issue 13).
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const method = request.method
    metrics.requests.inc({ method, route, status_code: String(reply.statusCode) })
    metrics.duration.observe({ method, route }, reply.elapsedTime / 1000)
    done()
  })

  // untagged, so the OpenAPI document (which lists tagged routes only) leaves it out
  app.get(path, async (_request, reply) => {
    const body = await registry.metrics()
    return reply.type(registry.contentType).send(body)
  })

  return metrics
}
