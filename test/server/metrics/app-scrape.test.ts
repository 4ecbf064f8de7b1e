/**
 * GET /metrics of a real app (buildApp over stand-ins) and of a real node (startNode on the
 * devnet, with private submission and the local builder): the default process metrics, the HTTP
 * families, and the submission, relay and builder families as a partner's operator scrapes them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNode, type ServiceNode } from '../../../src/node/start.ts'
import { DEV_PARTNER_TOKEN } from '../../../src/server/jsonrpc/partner-tokens-config.ts'
import { loadFixtureTxs } from '../../support/devnet.ts'
import { FULL_APP_TOKEN, buildFullApp } from '../full-app.ts'
import { expectSamples, parseExposition, sampleValue, type Exposition } from './exposition.ts'
import { withWorkersFromEnv } from '../../support/env.ts'

async function scrape(inject: (url: string) => Promise<{ status: number; contentType: string | undefined; body: string }>): Promise<Exposition> {
  const res = await inject('/metrics')
  expect(res.status).toBe(200)
  expect(res.contentType).toBe('text/plain; version=0.0.4; charset=utf-8')
  return parseExposition(res.body)
}

describe('GET /metrics of the app', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await buildFullApp()
  })
  afterAll(() => app.close())
  const get = async (url: string) => {
    const res = await app.inject({ url })
    return { status: res.statusCode, contentType: res.headers['content-type'] as string | undefined, body: res.body }
  }

  it('serves the default process metrics, the HTTP, state and eth_backrun families', async () => {
    await app.inject({ url: '/healthz' })
    await app.inject({ url: '/healthz' })
    // the stand-in backrun service rejects: an error answer
    await app.inject({
      method: 'POST',
      url: `/rpc/${FULL_APP_TOKEN}/backrun`,
      payload: { jsonrpc: '2.0', id: 1, method: 'eth_backrun', params: [{ to: `0x${'11'.repeat(20)}`, calldata: '0x', tokenIn: `0x${'22'.repeat(20)}`, amountIn: '1' }] },
    })
    const exposition = await scrape(get)
    const { types } = exposition
    expect(types.get('process_cpu_user_seconds_total')).toBe('counter')
    expect(sampleValue(exposition, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge')
    expect(types.get('nodejs_gc_duration_seconds')).toBe('histogram')
    expect(sampleValue(exposition, 'http_requests_total{method="GET",route="/healthz",status_code="200"}')).toBe(2)
    expect(sampleValue(exposition, 'http_request_duration_seconds_count{method="GET",route="/healthz"}')).toBe(2)
    expect(types.get('http_request_duration_seconds')).toBe('histogram')
    expect(sampleValue(exposition, 'state_head_block')).toBe(0)
    expect(sampleValue(exposition, 'state_source_info{mode="devnet"}')).toBe(1)
    expect(sampleValue(exposition, 'backrun_answers_total{outcome="error"}')).toBe(1)
    expect(sampleValue(exposition, 'backrun_answers_total{outcome="found"}')).toBe(0)
    // the quote route registered its families in the app's registry
    expect(types.get('quote_requests_total')).toBe('counter')
    expect(types.get('quote_service_duration_seconds')).toBe('histogram')
    expect(sampleValue(exposition, 'metrics_collector_errors_total')).toBe(0)
    // no submission pipeline was handed to this app: none of its families
    expect(types.has('submissions_open')).toBe(false)
  })

  it('each app has its own registry: a second app starts from zero', async () => {
    const other = await buildFullApp()
    try {
      const exposition = await scrape(async (url) => {
        const res = await other.inject({ url })
        return { status: res.statusCode, contentType: res.headers['content-type'] as string | undefined, body: res.body }
      })
      expect(sampleValue(exposition, 'http_requests_total{method="GET",route="/healthz",status_code="200"}')).toBeUndefined()
      expect(sampleValue(exposition, 'backrun_answers_total{outcome="error"}')).toBe(0)
    } finally {
      await other.close()
    }
  })
})

describe('GET /metrics of a node on the devnet', () => {
  let dir: string
  let node: ServiceNode
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metrics-node-'))
    // blocks only when the test mines one
    node = await startNode(withWorkersFromEnv({ PORT: '0', LOCAL_BUILDER_PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: join(dir, 'outbox'), LOCAL_BUILDER_BLOCK_TIME_MS: '600000' }))
  })
  afterAll(async () => {
    await node?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const get = async (url: string) => {
    const res = await fetch(`${node.url}${url}`)
    return { status: res.status, contentType: res.headers.get('content-type') ?? undefined, body: await res.text() }
  }
  async function until(what: string, check: (e: Exposition) => boolean): Promise<Exposition> {
    const deadline = Date.now() + 15_000
    for (;;) {
      const exposition = await scrape(get)
      if (check(exposition)) return exposition
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('exposes the dispatcher, relay, outbox and builder families, following a submission to inclusion', async () => {
    let exposition = await scrape(get)
    expectSamples(exposition, {
      submissions_open: 0,
      submissions_queued: 0,
      submission_inflight_sends: 0,
      dispatcher_overflowed: 0,
      outbox_open_submissions: 0,
      outbox_capacity: node.config.submission.maxPendingSubmissions,
      'relay_requests_total{relay="local-builder"}': 0,
      builder_blocks_built_total: 0,
    })
    expect(exposition.types.get('process_cpu_user_seconds_total')).toBe('counter')
    expect(exposition.types.get('backrun_verification_misses_total')).toBe('counter')

    const swap = loadFixtureTxs().find((t) => t.name === 'v2-swapExactETHForTokens-small')!
    const res = await fetch(`${node.url}/rpc/${DEV_PARTNER_TOKEN}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: swap.raw }] }),
    })
    expect(((await res.json()) as { result?: unknown }).result).toMatch(/^0x[0-9a-f]{64}$/)

    // sent to the builder for the next block, and waiting there
    exposition = await until('the bundle at the builder', (e) => (sampleValue(e, 'builder_pending_bundles') ?? 0) >= 1)
    expect(sampleValue(exposition, 'submissions_open')).toBe(1)
    expect(sampleValue(exposition, 'outbox_open_submissions')).toBe(1)
    expect(sampleValue(exposition, 'relay_requests_total{relay="local-builder"}')).toBeGreaterThanOrEqual(1)
    expect(sampleValue(exposition, 'relay_bundles_total{relay="local-builder",outcome="accepted"}')).toBeGreaterThanOrEqual(1)
    expect(sampleValue(exposition, 'dispatcher_head_block')).toBe(0)

    await node.builder!.builder.mineNow()
    exposition = await until('the submission included and finished', (e) => sampleValue(e, 'submissions_open') === 0)
    expect(sampleValue(exposition, 'builder_bundles_total{outcome="included"}')).toBeGreaterThanOrEqual(1)
    expectSamples(exposition, {
      builder_blocks_built_total: 1,
      dispatcher_head_block: 1,
      state_head_block: 1,
      outbox_open_submissions: 0,
      outbox_finished_submissions: 1,
      metrics_collector_errors_total: 0,
    })
  })
})
