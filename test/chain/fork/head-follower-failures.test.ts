/**
 * The head follower's failures with no caller to reject: a failed head poll, and a failed
 * warm-up of the recently read keys on a new head. Both are counted (pollErrors, warmupErrors),
 * reported to onError, and neither stops the source: the next poll retries, and a head whose
 * warm-up failed is still adopted (a cold cache is slower, not wrong).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Address } from '../../../src/chain/types.ts'
import { ForkStateSource } from '../../../src/chain/fork/fork-state-source.ts'
import { answerEach, startFakeUpstream, type FakeUpstream, type RpcRequestItem } from './fake-upstream.ts'

const hex = (n: bigint | number) => `0x${n.toString(16)}`
const hash = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`
const ACCOUNT: Address = '0x00000000000000000000000000000000000a11ce'

function header(n: bigint) {
  return { number: hex(n), hash: hash(n + 1000n), parentHash: hash(n + 999n), timestamp: hex(1_700_000_000n + n * 12n), gasLimit: hex(30_000_000), gasUsed: '0x0', miner: `0x${'00'.repeat(20)}`, mixHash: hash(0n), baseFeePerGas: hex(1_000_000_000) }
}

/** a scripted chain: head number, and switches that make polls or state reads fail */
function chain() {
  const state = { head: 1n, failPolls: false, failReads: false }
  const handler = answerEach((item: RpcRequestItem) => {
    switch (item.method) {
      case 'eth_chainId':
        return '0x1'
      case 'eth_getBlockByNumber': {
        const tag = item.params[0] as string
        if (tag === 'latest' && state.failPolls) return { error: { code: -32000, message: 'poll refused' } }
        return header(tag === 'latest' ? state.head : BigInt(tag))
      }
      case 'eth_getBalance':
      case 'eth_getTransactionCount':
        return state.failReads ? { error: { code: -32000, message: 'state read refused' } } : '0x1'
      case 'eth_getCode':
        return state.failReads ? { error: { code: -32000, message: 'state read refused' } } : '0x'
      case 'eth_getStorageAt':
        return state.failReads ? { error: { code: -32000, message: 'state read refused' } } : hash(7n)
      default:
        return { error: { code: -32601, message: `no ${item.method}` } }
    }
  })
  return { state, handler }
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

let upstream: FakeUpstream | undefined
let source: ForkStateSource | undefined
afterEach(async () => {
  await source?.close()
  await upstream?.close()
  source = undefined
  upstream = undefined
})

describe('fork head follower failures', () => {
  it('a failed poll is counted and reported, and the next poll adopts the new head', async () => {
    const { state, handler } = chain()
    upstream = await startFakeUpstream(handler)
    const errors: unknown[] = []
    source = await ForkStateSource.create({ url: upstream.url, pollIntervalMs: 20, maxRetries: 0, onError: (e) => errors.push(e) })
    expect(source.head.number).toBe(1n)

    state.failPolls = true
    state.head = 2n
    await until(() => source!.stats().pollErrors >= 2, 'two failed polls')
    expect(source.head.number).toBe(1n)
    expect(errors.length).toBeGreaterThanOrEqual(2)
    expect(String((errors[0] as Error).message)).toMatch(/poll refused/)

    state.failPolls = false
    await until(() => source!.head.number === 2n, 'the head after polls recover')
    expect(source.stats().headsAdopted).toBe(1)
  })

  it('a failed warm-up is counted and reported, and the head is adopted anyway', async () => {
    const { state, handler } = chain()
    upstream = await startFakeUpstream(handler)
    const errors: unknown[] = []
    const heads: bigint[] = []
    source = await ForkStateSource.create({ url: upstream.url, pollIntervalMs: 20, maxRetries: 0, onError: (e) => errors.push(e) })
    source.onNewHead((b) => heads.push(b.number))
    // read something so the next head has keys to warm
    expect(await source.latest().getStorage(ACCOUNT, 5n)).toBe(7n)
    expect((await source.latest().getAccount(ACCOUNT))?.nonce).toBe(1n)

    state.failReads = true
    state.head = 3n
    await until(() => source!.head.number === 3n, 'the new head')
    const stats = source.stats()
    expect(stats.warmupErrors).toBe(1)
    expect(stats.warmedKeys).toBeGreaterThan(0)
    expect(stats.pollErrors).toBe(0)
    expect(heads).toEqual([3n])
    expect(errors).toHaveLength(1)
    expect(String((errors[0] as Error).message)).toMatch(/state read refused/)
    // the new reader reads at block 3 once the upstream answers again
    state.failReads = false
    expect(await source.latest().getStorage(ACCOUNT, 5n)).toBe(7n)
    const storageReads = upstream.items().filter((i) => i.method === 'eth_getStorageAt')
    expect(storageReads.at(-1)?.params[2]).toBe('0x3')
  })
})
