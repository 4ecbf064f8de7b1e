import { describe, expect, it } from 'vitest'
import type { BackrunFound, BackrunRequest } from '../../../src/backrun/types.ts'
import { countBackrunAnswers, registerBackrunEngineMetrics } from '../../../src/server/metrics/backrun-metrics.ts'
import { createMetricsRegistry } from '../../../src/server/metrics/registry.ts'
import { parseExposition, sampleValue } from './exposition.ts'

const REQUEST = { to: `0x${'11'.repeat(20)}`, calldata: '0x', value: 0n, tokenIn: `0x${'22'.repeat(20)}`, amountIn: 1n } as BackrunRequest
const FOUND = { calldata: '0x01' } as unknown as BackrunFound

describe('eth_backrun answers', () => {
  it('counts found, none and error, passing answers and errors through unchanged', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    const answers: Array<() => Promise<BackrunFound | null>> = [async () => FOUND, async () => null, async () => null, () => Promise.reject(new Error('upstream down'))]
    const service = countBackrunAnswers({ backrun: () => answers.shift()!() }, registry)

    // every outcome has a series before the first request
    let exposition = parseExposition(await registry.metrics())
    expect(exposition.types.get('backrun_answers_total')).toBe('counter')
    for (const outcome of ['found', 'none', 'error']) expect(sampleValue(exposition, `backrun_answers_total{outcome="${outcome}"}`)).toBe(0)

    expect(await service.backrun(REQUEST)).toBe(FOUND)
    expect(await service.backrun(REQUEST)).toBeNull()
    expect(await service.backrun(REQUEST)).toBeNull()
    await expect(service.backrun(REQUEST)).rejects.toThrow('upstream down')

    exposition = parseExposition(await registry.metrics())
    expect(sampleValue(exposition, 'backrun_answers_total{outcome="found"}')).toBe(1)
    expect(sampleValue(exposition, 'backrun_answers_total{outcome="none"}')).toBe(2)
    expect(sampleValue(exposition, 'backrun_answers_total{outcome="error"}')).toBe(1)
  })
})

describe('backrun engine families', () => {
  it("read the engine's stats() at scrape time", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    const stats = { requests: 9, userCallReverted: 2, found: 4, verificationMisses: 1 }
    registerBackrunEngineMetrics(registry, { stats: () => ({ ...stats }) })
    let exposition = parseExposition(await registry.metrics())
    expect(sampleValue(exposition, 'backrun_found_total')).toBe(4)
    expect(sampleValue(exposition, 'backrun_verification_misses_total')).toBe(1)
    expect(sampleValue(exposition, 'backrun_user_call_reverted_total')).toBe(2)
    stats.verificationMisses = 3
    exposition = parseExposition(await registry.metrics())
    expect(exposition.types.get('backrun_verification_misses_total')).toBe('counter')
    expect(sampleValue(exposition, 'backrun_verification_misses_total')).toBe(3)
  })
})
