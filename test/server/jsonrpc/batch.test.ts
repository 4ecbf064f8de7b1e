import { describe, expect, it } from 'vitest'
import { InvalidParamsError, type MethodTable } from '../../../src/server/jsonrpc/index.ts'
import { mapBounded, planBatch } from '../../../src/server/jsonrpc/batch.ts'
import { buildTestApp, post, request, TX_HASH } from './helpers.ts'

const RAW_TX = '0x02f8'
const note = (method: string, params: unknown = [{ tx: RAW_TX }]) => ({ jsonrpc: '2.0', method, params })

/** A submit table that records what ran. */
function recordingEndpoints(ran: string[]): { backrun: MethodTable; submit: MethodTable } {
  return {
    backrun: {},
    submit: {
      eth_notifyRawTransaction: async (params) => {
        ran.push(`notify:${String(params.tx)}`)
        return TX_HASH
      },
      eth_sendPrivateRawTransaction: async (params) => {
        ran.push(`send:${String(params.tx)}`)
        if (params.tx === 'bad') throw new InvalidParamsError('tx must be hex')
        if (params.tx === 'boom') throw new Error('boom')
        return TX_HASH
      },
      test_context: async (_params, ctx) => ctx.requestId,
    },
  }
}

describe('batches', () => {
  it('an empty batch is one -32600 error object with id null, not an array', async () => {
    const t = await buildTestApp()
    const res = await post(t.app, 'submit', [])
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } })
    await t.app.close()
  })

  describe('over maxBatchSize', () => {
    it('one -32600 "batch too large" in an array, with the id of the first call; no entry runs', async () => {
      const ran: string[] = []
      const t = await buildTestApp({ endpoints: recordingEndpoints(ran), maxBatchSize: 3 })
      const res = await post(t.app, 'submit', [note('eth_notifyRawTransaction'), 55, request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 'first'), request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 2)])
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual([{ jsonrpc: '2.0', id: 'first', error: { code: -32600, message: expect.stringContaining('batch too large') } }])
      expect(ran).toEqual([])
      await t.app.close()
    })

    it('id null when no entry is a call', async () => {
      const t = await buildTestApp({ maxBatchSize: 2 })
      const res = await post(t.app, 'submit', [note('eth_notifyRawTransaction'), note('eth_notifyRawTransaction'), note('eth_notifyRawTransaction')])
      expect(res.json()).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } }])
      await t.app.close()
    })

    it('exactly maxBatchSize entries are processed', async () => {
      const t = await buildTestApp({ maxBatchSize: 3 })
      const res = await post(t.app, 'submit', [1, 2, 3].map((id) => request('eth_notifyRawTransaction', [{ tx: RAW_TX }], id)))
      expect((res.json() as { id: number }[]).map((r) => r.id)).toEqual([1, 2, 3])
      await t.app.close()
    })

    it('the default limit is 50', async () => {
      const t = await buildTestApp()
      const entries = (n: number) => Array.from({ length: n }, (_, i) => request('eth_notifyRawTransaction', [{ tx: RAW_TX }], i))
      expect((await post(t.app, 'submit', entries(50))).json()).toHaveLength(50)
      expect((await post(t.app, 'submit', entries(51))).json()).toEqual([expect.objectContaining({ id: 0, error: expect.objectContaining({ code: -32600 }) })])
      await t.app.close()
    })
  })

  it('handles each entry on its own and answers in request order, without the notifications', async () => {
    const ran: string[] = []
    const t = await buildTestApp({ endpoints: recordingEndpoints(ran) })
    const res = await post(t.app, 'submit', [
      request('eth_sendPrivateRawTransaction', [{ tx: '0x01' }], 1),
      55,
      note('eth_notifyRawTransaction', [{ tx: '0x02' }]),
      request('eth_backrun', [{}], 2),
      { foo: 'bar' },
      request('eth_sendPrivateRawTransaction', [{ tx: 'bad' }], 3),
      request('eth_sendPrivateRawTransaction', [{ tx: 'boom' }], 4),
      request('eth_sendPrivateRawTransaction', ['0x03'], 5),
      request('nope', [{}], 6),
      { jsonrpc: '2.0', id: { x: 1 }, method: 'eth_notifyRawTransaction', params: [{ tx: RAW_TX }] },
    ])
    expect(res.statusCode).toBe(200)
    const body = res.json() as { id: unknown; result?: unknown; error?: { code: number } }[]
    expect(body.map((r) => [r.id, r.error?.code ?? r.result])).toEqual([
      [1, TX_HASH],
      [null, -32600],
      [2, -32601],
      [null, -32600],
      [3, -32000],
      [4, -32603],
      [5, -32600],
      [6, -32601],
      [null, -32600],
    ])
    expect(ran.sort()).toEqual(['notify:0x02', 'send:0x01', 'send:bad', 'send:boom'])
    await t.app.close()
  })

  it('gives each entry its own request id, <request id>:<index>', async () => {
    const t = await buildTestApp({ endpoints: recordingEndpoints([]) })
    const body = (await post(t.app, 'submit', [request('test_context', [{}], 'a'), request('test_context', [{}], 'b')])).json() as { result: string }[]
    expect(body[0].result).toMatch(/^req-[0-9a-z]+:0$/)
    expect(body[1].result).toBe(body[0].result.replace(/:0$/, ':1'))
    await t.app.close()
  })

  it('runs entries concurrently, at most batchConcurrency at a time', async () => {
    let inFlight = 0
    let peak = 0
    const slow: MethodTable = {
      eth_notifyRawTransaction: async (params) => {
        inFlight++
        peak = Math.max(peak, inFlight)
        await new Promise((resolve) => setTimeout(resolve, 15))
        inFlight--
        return params.n
      },
    }
    const t = await buildTestApp({ endpoints: { backrun: {}, submit: slow }, batchConcurrency: 3 })
    const res = await post(t.app, 'submit', Array.from({ length: 10 }, (_, i) => request('eth_notifyRawTransaction', [{ n: i }], i)))
    expect(peak).toBe(3)
    expect((res.json() as { id: number; result: number }[]).map((r) => [r.id, r.result])).toEqual(Array.from({ length: 10 }, (_, i) => [i, i]))
    await t.app.close()
  })
})

describe('notifications (no id member): no response', () => {
  it('a single notification: HTTP 200 with an empty body, and the handler ran', async () => {
    const ran: string[] = []
    const t = await buildTestApp({ endpoints: recordingEndpoints(ran) })
    const res = await post(t.app, 'submit', note('eth_notifyRawTransaction', [{ tx: '0xaa' }]))
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
    expect(res.headers['content-length']).toBe('0')
    expect(res.headers['content-type']).toBeUndefined()
    expect(ran).toEqual(['notify:0xaa'])
    await t.app.close()
  })

  it('a batch of notifications only: HTTP 200 with an empty body; every entry ran', async () => {
    const ran: string[] = []
    const t = await buildTestApp({ endpoints: recordingEndpoints(ran) })
    const res = await post(t.app, 'submit', [note('eth_notifyRawTransaction', [{ tx: '0x01' }]), note('eth_sendPrivateRawTransaction', [{ tx: '0x02' }])])
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
    expect(ran.sort()).toEqual(['notify:0x01', 'send:0x02'])
    await t.app.close()
  })

  it.each<[string, unknown]>([
    ['an unknown method', note('eth_unknown')],
    ['a method of the other endpoint', note('eth_backrun')],
    ['malformed params', note('eth_notifyRawTransaction', ['0x01'])],
    ['a handler throwing InvalidParamsError', note('eth_sendPrivateRawTransaction', [{ tx: 'bad' }])],
    ['a handler throwing an Error', note('eth_sendPrivateRawTransaction', [{ tx: 'boom' }])],
  ])('no response even for %s', async (_name, body) => {
    const t = await buildTestApp({ endpoints: recordingEndpoints([]) })
    const res = await post(t.app, 'submit', body)
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
    await t.app.close()
  })

  it('a handler error in a notification is still logged', async () => {
    const t = await buildTestApp({ endpoints: recordingEndpoints([]) })
    await post(t.app, 'submit', note('eth_sendPrivateRawTransaction', [{ tx: 'boom' }]))
    expect(t.logLines().some((l) => l.msg === 'json-rpc handler failed' && l.level === 50)).toBe(true)
    await t.app.close()
  })

  it('an object without id that is not a valid request is answered with -32600, id null (spec example)', async () => {
    const t = await buildTestApp()
    const res = await post(t.app, 'submit', { jsonrpc: '2.0', method: 1, params: 'bar' })
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } })
    await t.app.close()
  })
})

describe('batch helpers', () => {
  it('planBatch', () => {
    expect(planBatch([], 2)).toEqual({ kind: 'empty' })
    expect(planBatch([1, 2], 2)).toEqual({ kind: 'run', entries: [1, 2] })
    expect(planBatch([1, { jsonrpc: '2.0', id: 7, method: 'm' }, { id: 8, method: 'n' }], 2)).toEqual({ kind: 'too_large', id: 7 })
    // a call needs a valid id and a method name
    expect(planBatch([{ id: {}, method: 'm' }, { id: 3 }, { id: 4, method: '' }], 2)).toEqual({ kind: 'too_large', id: null })
  })

  it('mapBounded keeps order and never exceeds the bound', async () => {
    let inFlight = 0
    let peak = 0
    const out = await mapBounded([5, 1, 4, 2, 3], 2, async (n, i) => {
      inFlight++
      peak = Math.max(peak, inFlight)
      await new Promise((resolve) => setTimeout(resolve, n))
      inFlight--
      return `${i}:${n}`
    })
    expect(out).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3'])
    expect(peak).toBe(2)
    expect(await mapBounded([], 4, async () => 1)).toEqual([])
  })
})
