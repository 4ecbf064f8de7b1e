/**
 * The fork's record of block hashes against a real anvil: a miss reads eth_getBlockByNumber once
 * (concurrent misses share the read), the bound drops the lowest numbers, and dropAbove forgets
 * the replaced numbers and keeps a read in flight then from being recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../../support/anvil.ts'
import { BlockHashRecord } from '../../../src/chain/fork/block-hashes.ts'
import { UpstreamClient } from '../../../src/chain/fork/upstream-client.ts'
import { UpstreamError, type Hex } from '../../../src/chain/types.ts'
import { answerEach, startFakeUpstream } from './fake-upstream.ts'

let anvil: AnvilInstance
const hashOf = async (n: bigint) => (await anvilRpc<{ hash: Hex }>(anvil.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash

beforeAll(async () => {
  anvil = await startAnvil()
  await anvilRpc(anvil.url, 'anvil_mine', ['0x10'])
})
afterAll(() => anvil?.stop())

describe('BlockHashRecord', () => {
  it('reads a missing hash once, records it and the parent its header names', async () => {
    const client = new UpstreamClient({ url: anvil.url })
    const record = new BlockHashRecord(client)
    const [a, b] = await Promise.all([record.hashOf(5n), record.hashOf(5n)])
    expect(a).toBe(await hashOf(5n))
    expect(b).toBe(a)
    expect(client.stats().rpcCalls).toBe(1)
    expect(record.known(4n)).toBe(await hashOf(4n))
    expect(await record.hashOf(4n)).toBe(record.known(4n))
    expect(client.stats().rpcCalls).toBe(1)
    client.close()
  })

  it('keeps at most maxEntries numbers, dropping the lowest', () => {
    const client = new UpstreamClient({ url: anvil.url })
    const record = new BlockHashRecord(client, { maxEntries: 257 })
    for (let n = 1n; n <= 300n; n++) record.record({ number: n, hash: `0x${n.toString(16).padStart(64, '0')}` })
    expect(record.stats().blockHashes).toBe(257)
    expect(record.known(43n)).toBeUndefined()
    expect(record.known(44n)).toBeDefined()
    expect(record.newest()).toBe(300n)
    expect(() => new BlockHashRecord(client, { maxEntries: 256 })).toThrow(RangeError)
    client.close()
  })

  it('dropAbove forgets the replaced numbers, and a read in flight then is answered but not recorded', async () => {
    const client = new UpstreamClient({ url: anvil.url })
    const record = new BlockHashRecord(client)
    await record.hashOf(10n)
    const inflight = record.hashOf(12n)
    expect(record.dropAbove(9n)).toEqual([{ number: 10n, hash: await hashOf(10n) }])
    expect(await inflight).toBe(await hashOf(12n))
    expect(record.known(12n)).toBeUndefined()
    expect(record.known(9n)).toBe(await hashOf(9n))
    client.close()
  })

  it('an upstream that answers another block than the one asked for is an UpstreamError, nothing recorded', async () => {
    const header = await anvilRpc<unknown>(anvil.url, 'eth_getBlockByNumber', ['0x7', false])
    const upstream = await startFakeUpstream(answerEach(() => header))
    const client = new UpstreamClient({ url: upstream.url })
    const record = new BlockHashRecord(client)
    const error = await record.hashOf(5n).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UpstreamError)
    expect(error).toMatchObject({ reason: 'malformed', message: 'eth_getBlockByNumber: asked for block 5, got 7', details: { method: 'eth_getBlockByNumber' } })
    expect(record.known(5n)).toBeUndefined()
    client.close()
    await upstream.close()
  })
})
