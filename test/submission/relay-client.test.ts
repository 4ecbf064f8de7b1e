import { inspect } from 'node:util'

import { keccak256, recoverAddress, recoverMessageAddress, toBytes, verifyMessage } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'

import type { Address, Hex } from '../../src/chain/types.ts'
import { BaseError } from '../../src/primitives/base-error.ts'
import {
  RelayClient,
  RelayError,
  SearcherKey,
  encodeSendBundleRequest,
  parseRelayEndpoints,
  type RelayBundle,
} from '../../src/submission/index.ts'
import { SEARCHER_KEY_HEX, backrunTx, sentTxs, startRelay, userTx, type RecordingRelay } from './helpers.ts'
import { TransportError } from '../../src/transport/transport-error.ts'

const relays: RecordingRelay[] = []
async function relay(behaviour?: Parameters<typeof startRelay>[0]): Promise<RecordingRelay> {
  const r = await startRelay(behaviour)
  relays.push(r)
  return r
}
afterEach(async () => {
  for (const r of relays.splice(0)) await r.close()
})

const key = SearcherKey.fromHex(SEARCHER_KEY_HEX)
const fastBackoff = { baseMs: 5, maxMs: 20 }

function signatureParts(header: string | string[] | undefined): { address: Address; signature: Hex } {
  expect(typeof header).toBe('string')
  const [address, signature] = (header as string).split(':')
  return { address: address as Address, signature: signature as Hex }
}

describe('RelayClient', () => {
  it('reuses kept-alive connections: ten sends one after another open at most two', async () => {
    const r = await relay()
    const client = new RelayClient({ name: 'r', url: r.url }, key)
    const user = await userTx(0)
    for (let block = 1n; block <= 10n; block++) await client.sendBundle({ entries: [{ tx: user }], blockNumber: block })
    expect(r.requests).toHaveLength(10)
    // undici frees a connection just after the answer's last byte is read, so the next request may
    // find it still busy and open a second one; a connection per request would be ten ports
    expect(new Set(r.requests.map((q) => q.remotePort)).size).toBeLessThanOrEqual(2)
  })

  it('forwards the raw tx strings unchanged and signs the body the Flashbots way', async () => {
    const r = await relay()
    const client = new RelayClient({ name: 'r', url: r.url }, key)
    const user = await userTx(0, '0x095ea7b3')
    const backrun = await backrunTx(0)
    const result = await client.sendBundle({ entries: [{ tx: user }, { tx: backrun }], blockNumber: 18_000_001n, revertingTxHashes: [keccak256(backrun)] })
    expect(result).toEqual({ relay: 'r', attempts: 1, relayBundleHash: `0x${'1'.padStart(64, '0')}` })

    const [req] = r.requests
    expect(req.method).toBe('eth_sendBundle')
    expect(sentTxs(req)).toEqual([user, backrun])
    expect(Buffer.from(sentTxs(req)[0].slice(2), 'hex').equals(Buffer.from(user.slice(2), 'hex'))).toBe(true)
    expect(req.params.blockNumber).toBe('0x112a881')
    expect(req.params.revertingTxHashes).toEqual([keccak256(backrun)])

    const { address, signature } = signatureParts(req.headers['x-flashbots-signature'])
    expect(address).toBe(key.address)
    const message = keccak256(toBytes(req.body))
    expect(await verifyMessage({ address, message, signature })).toBe(true)
    expect(await recoverMessageAddress({ message, signature })).toBe(key.address)
    // independently of viem's message handling: the EIP-191 hash of the 66-character hex string
    // of keccak256(body), as Flashbots' go-utils computes it (accounts.TextHash(hashedBody.Hex()))
    const eip191 = keccak256(toBytes(`\x19Ethereum Signed Message:\n${message.length}${message}`))
    expect(message.length).toBe(66)
    expect(await recoverAddress({ hash: eip191, signature })).toBe(key.address)
    // a signature over a different body does not verify
    expect(await verifyMessage({ address, message: keccak256(toBytes(`${req.body} `)), signature })).toBe(false)
  })

  it('retries a failing relay with backoff and reports the attempts', async () => {
    const r = await relay({ failFirst: 2, failStatus: 503 })
    const retries: number[] = []
    const client = new RelayClient({ name: 'r', url: r.url, maxAttempts: 4, backoff: fastBackoff }, key)
    const result = await client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }, { onRetry: ({ attempt }) => retries.push(attempt) })
    expect(result.attempts).toBe(3)
    expect(retries).toEqual([1, 2])
    expect(r.requests).toHaveLength(3)
    // every attempt is the same signed body
    expect(new Set(r.requests.map((q) => q.body)).size).toBe(1)
  })

  it('gives up after maxAttempts with a typed RelayError', async () => {
    const r = await relay({ failFirst: 100, failStatus: 502 })
    const client = new RelayClient({ name: 'r', url: r.url, maxAttempts: 3, backoff: fastBackoff }, key)
    const err = await client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RelayError)
    expect(err).toMatchObject({ relay: 'r', reason: 'http', attempts: 3, details: { status: 502, retryable: true } })
    expect(r.requests).toHaveLength(3)
    // the relay's member of the transport family: its own name and message, the TransportError as cause
    const relayError = err as RelayError
    expect(relayError).toBeInstanceOf(BaseError)
    expect(relayError.message).toBe(`relay r: ${relayError.shortMessage}`)
    expect(relayError.cause).toBeInstanceOf(TransportError)
    expect(relayError.walk(TransportError)).toMatchObject({ reason: 'http', status: 502, attempts: 3 })
  })

  it('times out a silent relay per attempt and retries', async () => {
    const r = await relay({ delayMs: 500 })
    const client = new RelayClient({ name: 'slow', url: r.url, timeoutMs: 50, maxAttempts: 2, backoff: fastBackoff }, key)
    const started = performance.now()
    const err = await client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }).catch((e: unknown) => e)
    expect(err).toMatchObject({ name: 'RelayError', reason: 'timeout', attempts: 2 })
    expect(performance.now() - started).toBeLessThan(450) // the relay would answer only after 500 ms
  })

  it('does not retry a 4xx or a JSON-RPC error the relay will repeat', async () => {
    const bad = await relay({ failFirst: 100, failStatus: 400 })
    const c1 = new RelayClient({ name: 'bad', url: bad.url, maxAttempts: 4, backoff: fastBackoff }, key)
    await expect(c1.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n })).rejects.toMatchObject({ reason: 'http', attempts: 1 })
    expect(bad.requests).toHaveLength(1)

    const rpc = await relay({ rpcError: { code: -32000, message: 'nonce too low' } })
    const c2 = new RelayClient({ name: 'rpc', url: rpc.url, maxAttempts: 4, backoff: fastBackoff }, key)
    await expect(c2.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n })).rejects.toMatchObject({ reason: 'rpc', attempts: 1, details: { rpcCode: -32000 } })
  })

  it('reports a refused connection as a network error after its retries', async () => {
    const r = await relay()
    const url = r.url
    await r.close()
    relays.splice(relays.indexOf(r), 1)
    const client = new RelayClient({ name: 'gone', url, maxAttempts: 2, backoff: fastBackoff }, key)
    await expect(client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n })).rejects.toMatchObject({ reason: 'network', attempts: 2 })
  })

  it('stops retrying when aborted', async () => {
    const r = await relay({ failFirst: 100 })
    const client = new RelayClient({ name: 'r', url: r.url, maxAttempts: 10, backoff: { baseMs: 1_000, maxMs: 1_000 } }, key)
    const controller = new AbortController()
    const sending = client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }, { signal: controller.signal, onRetry: () => controller.abort(new Error('block passed')) })
    await expect(sending).rejects.toMatchObject({ reason: 'aborted' })
    expect(r.requests).toHaveLength(1)
  })

  it('counts every attempt, each failed attempt by reason, and each send by outcome', async () => {
    const r = await relay({ failFirst: 2, failStatus: 503 })
    const client = new RelayClient({ name: 'r', url: r.url, maxAttempts: 4, backoff: fastBackoff }, key)
    await client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n })
    const controller = new AbortController()
    const slow = await relay({ failFirst: 100 })
    const aborted = new RelayClient({ name: 's', url: slow.url, maxAttempts: 4, backoff: { baseMs: 1_000, maxMs: 1_000 } }, key)
    await expect(aborted.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }, { signal: controller.signal, onRetry: () => controller.abort() })).rejects.toMatchObject({
      reason: 'aborted',
      attempts: 1,
      message: 'relay s: aborted while waiting to retry',
    })
    expect(client.stats()).toMatchObject({ requests: 3, failures: { http: 2, aborted: 0 }, bundles: { accepted: 1, failed: { http: 0 } } })
    // the abort came while waiting: not a failed attempt, but the send's outcome
    expect(aborted.stats()).toMatchObject({ requests: 1, failures: { http: 1, aborted: 0 }, bundles: { accepted: 0, failed: { aborted: 1 } } })
    // an already aborted send makes no request but counts its attempt, as cancelled
    await expect(aborted.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }, { signal: controller.signal })).rejects.toMatchObject({ reason: 'aborted', attempts: 0 })
    expect(aborted.stats()).toMatchObject({ requests: 2, failures: { http: 1, aborted: 1 }, bundles: { failed: { aborted: 2 } } })
    expect(slow.requests).toHaveLength(1)
  })

  it('sends hash references only in the relay dialect configured for it', async () => {
    const target = keccak256(await userTx(0))
    const backrun = await backrunTx(0)
    const bundle: RelayBundle = { entries: [{ hash: target }, { tx: backrun }], blockNumber: 16n }

    const plain = await relay()
    await expect(new RelayClient({ name: 'plain', url: plain.url }, key).sendBundle(bundle)).rejects.toMatchObject({
      reason: 'unsupported',
      attempts: 0,
      message: 'relay plain: does not accept bundles that reference a transaction by hash',
    })
    expect(plain.requests).toHaveLength(0)

    const merkle = await relay()
    await new RelayClient({ name: 'merkle', url: merkle.url, hashReference: 'eth_sendBundle' }, key).sendBundle(bundle)
    expect(merkle.requests[0].method).toBe('eth_sendBundle')
    expect(sentTxs(merkle.requests[0])).toEqual([target, backrun])

    const share = await relay()
    await new RelayClient({ name: 'share', url: share.url, hashReference: 'mev_sendBundle' }, key).sendBundle(bundle)
    expect(share.requests[0].method).toBe('mev_sendBundle')
    expect(share.requests[0].params).toEqual({ version: 'v0.1', inclusion: { block: '0x10' }, body: [{ hash: target }, { tx: backrun, canRevert: false }] })
  })

  it('encodes the optional Flashbots fields', () => {
    const body = JSON.parse(
      encodeSendBundleRequest({ entries: [{ tx: '0x01' }], blockNumber: 255n, minTimestamp: 10n, maxTimestamp: 20n, replacementUuid: 'u-1' }, 7, undefined),
    ) as { id: number; params: unknown[] }
    expect(body.id).toBe(7)
    expect(body.params[0]).toEqual({ txs: ['0x01'], blockNumber: '0xff', minTimestamp: 10, maxTimestamp: 20, replacementUuid: 'u-1' })
  })
})

describe('SearcherKey', () => {
  it('never shows the private key', () => {
    const secret = SEARCHER_KEY_HEX.slice(2)
    const views = [JSON.stringify({ key }), inspect(key), inspect({ nested: { key } }, { depth: 5 }), String(key), `${key}`]
    for (const view of views) {
      expect(view).not.toContain(secret)
      expect(view).toContain(key.address)
    }
    expect(Object.keys(key)).toEqual(['address'])
  })

  it('rejects a malformed key without quoting it', () => {
    const bad = `0x${'zz'.repeat(32)}`
    expect(() => SearcherKey.fromHex(bad)).toThrow(TypeError)
    try {
      SearcherKey.fromHex(bad)
    } catch (e) {
      expect((e as Error).message).not.toContain('zz')
    }
    expect(() => SearcherKey.fromHex(`0x${'00'.repeat(32)}`)).toThrow(TypeError)
  })
})

describe('parseRelayEndpoints', () => {
  it('reports every problem at once', () => {
    const { relays: parsed, problems } = parseRelayEndpoints(
      JSON.stringify([
        { name: 'flashbots', url: 'https://relay.flashbots.net', hashReference: 'mev_sendBundle' },
        { name: 'flashbots', url: 'https://example.org' },
        { name: 'bad name!', url: 'ftp://x', hashReference: 'yes' },
      ]),
    )
    expect(parsed.map((r) => r.name)).toEqual(['flashbots'])
    expect(problems).toHaveLength(4)
    expect(parseRelayEndpoints('nope').problems).toHaveLength(1)
  })
})
