/**
 * eth_sendPrivateRawTransaction, eth_sendBundle and eth_notifyRawTransaction through the real
 * JSON-RPC routes, with a real OutboxStore on disk behind them:
 * - success: the hash returned is keccak256 of the exact bytes (a bundle: the bundle-hash rule,
 *   checked against fixtures/corpora/bundle-hash), and the submission is on disk before the answer;
 * - every malformed input is -32000 naming its cause (invalid vectors of fixtures/corpora/tx-vectors);
 * - a store that cannot write, or a full outbox, is -32603 and nothing is acknowledged or stored.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { concat, keccak256 } from 'viem'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { Hex } from '../../../src/chain/types.ts'
import {
  DEFAULT_SUBMISSION_LIMITS,
  resolveSubmissionLimits,
  submissionMethods,
  type SubmissionAcceptor,
  type SubmissionMethodsDeps,
} from '../../../src/server/rpc/submission-methods.ts'
import { Dispatcher, OutboxStore, submissionId, type BundleRelay, type NewSubmission } from '../../../src/submission/index.ts'
import type { TxDecodeErrorReason } from '../../../src/tx/errors.ts'
import { decodeSignedTransaction, transactionTipCap } from '../../../src/tx/index.ts'
import { loadFixtureTxs, loadRegistry, signDevTransfer, type FixtureTx } from '../../support/devnet.ts'
import { FixedPlanner, ManualHeads, ManualInclusion, simulator, tempDir } from '../../submission/helpers.ts'
import { buildTestApp, post, request, TOKEN_BETA, type TestApp } from '../jsonrpc/helpers.ts'

const DEVNET = { chainId: 31337n, hardfork: 'prague' }
const MAINNET = { chainId: 1n, hardfork: 'prague' }

const fixtures = loadFixtureTxs()
const fx = (name: string): FixtureTx => {
  const found = fixtures.find((f) => f.name === name)
  if (found === undefined) throw new Error(`no fixture ${name}`)
  return found
}
const A = fx('v2-swapExactETHForTokens-small') // from dev account 0, nonce 0
const B = fx('v2-swapExactETHForTokens-large') // from dev account 1
const C = fx('v3-exactInputSingle-large') // from dev account 0 again, nonce 0 as well

interface BundleVector {
  txs: Hex[]
  txHashes: Hex[]
  bundleHash: Hex
  note: string
}
const bundleVectors = JSON.parse(readFileSync(join(import.meta.dirname, '../../../fixtures/corpora/bundle-hash/bundle_hash_vectors.json'), 'utf8')) as {
  documented_example: { txHashes: Hex[]; bundleHash: Hex }
  derived_examples_NOT_upstream: BundleVector[]
}

interface TxVector {
  name: string
  txbytes: Hex
  result: Record<string, { hash: string } | { exception: string }>
}
const txVectors = (JSON.parse(readFileSync(join(import.meta.dirname, '../../../fixtures/corpora/tx-vectors/ethereum_tests_TransactionTests_subset.json'), 'utf8')) as { vectors: TxVector[] }).vectors
const FORK_ORDER = ['Frontier', 'Homestead', 'EIP150', 'EIP158', 'Byzantium', 'Constantinople', 'ConstantinopleFix', 'Istanbul', 'Berlin', 'London', 'Merge', 'Paris', 'Shanghai', 'Cancun', 'Prague', 'Osaka']
function newest(v: TxVector): { hash: string } | { exception: string } {
  const fork = Object.keys(v.result).sort((a, b) => FORK_ORDER.indexOf(b) - FORK_ORDER.indexOf(a))[0]
  return v.result[fork]
}
/** ethereum/tests exception -> our reason (as test/tx/decode-transaction.test.ts maps them) */
const EXCEPTION_REASON: Record<string, TxDecodeErrorReason> = {
  LeadingZerosNonce: 'rlp',
  InvalidVRS: 'signature',
  '1559PriorityFeeGreaterThanBaseFee': 'invalid_fields',
  TR_TypeNotSupported: 'unsupported_type',
}
const CAUSE: Record<TxDecodeErrorReason, RegExp> = {
  malformed_hex: /malformed hex/,
  empty: /empty transaction/,
  too_large: /too large/,
  rlp: /RLP decode failure/,
  signature: /invalid signature/,
  chain_id: /wrong chain id/,
  unsupported_type: /unsupported transaction type/,
  invalid_fields: /invalid transaction fields/,
}

let dir: { path: string; cleanup: () => Promise<void> }
let store: OutboxStore
const apps: TestApp[] = []

beforeEach(async () => {
  dir = await tempDir('submission-methods-')
  store = new OutboxStore(join(dir.path, 'outbox'), { writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 2 } })
  await store.open()
})

afterEach(async () => {
  for (const t of apps.splice(0)) await t.app.close()
  await store.close().catch(() => undefined)
  await dir.cleanup()
})

const persisting = (): SubmissionAcceptor => ({ accept: (input: NewSubmission) => store.persist(input) })

async function appWith(deps: Partial<SubmissionMethodsDeps> = {}): Promise<TestApp> {
  const t = await buildTestApp({ endpoints: { backrun: {}, submit: submissionMethods({ submissions: persisting(), decode: DEVNET, ...deps }) } })
  apps.push(t)
  return t
}

interface RpcAnswer {
  result?: unknown
  error?: { code: number; message: string; data?: { field?: string; reason?: string } }
}

async function call(t: TestApp, method: string, params: Record<string, unknown>, token?: string): Promise<RpcAnswer> {
  const res = await post(t.app, 'submit', request(method, [params]), token === undefined ? {} : { token })
  expect(res.statusCode).toBe(200)
  return res.json() as RpcAnswer
}

async function rejected(t: TestApp, method: string, params: Record<string, unknown>): Promise<{ message: string; field?: string; reason?: string }> {
  const answer = await call(t, method, params)
  expect(answer.result, JSON.stringify(answer)).toBeUndefined()
  expect(answer.error?.code).toBe(-32000)
  return { message: answer.error!.message, field: answer.error!.data?.field, reason: answer.error!.data?.reason }
}

function txHashOf(raw: string): Hex {
  return keccak256(raw as Hex)
}

// ---------------------------------------------------------------------------------------------

describe('success paths', () => {
  it('eth_sendPrivateRawTransaction returns keccak256 of the raw bytes and has stored the exact bytes before answering', async () => {
    const t = await appWith()
    for (const f of [A, B, fx('eth-transfer')]) {
      const answer = await call(t, 'eth_sendPrivateRawTransaction', { tx: f.raw })
      expect(answer.error).toBeUndefined()
      expect(answer.result).toBe(txHashOf(f.raw))
      expect(answer.result).toBe(f.hash.toLowerCase())
      const stored = await store.get(submissionId('private-tx', f.hash))
      expect(stored?.record.partnerId).toBe('alpha')
      expect(stored?.record.rawTxs).toEqual([f.raw.toLowerCase()])
      expect(stored?.record.txHashes).toEqual([f.hash.toLowerCase()])
      expect(stored?.events.map((e) => e.type)).toEqual(['received'])
    }
    // the raw transaction never reaches the logs
    expect(t.logText()).not.toContain(A.raw.slice(2, 80))
  })

  it('leaves what it decoded out of the decode memo (the acknowledging thread does not decode it again)', async () => {
    const raw = await signDevTransfer(loadRegistry(), 3, 901, 1_000_000_000n)
    const t = await appWith()
    expect((await call(t, 'eth_sendPrivateRawTransaction', { tx: raw })).result).toBe(txHashOf(raw))
    // not remembered: two later decodes that do not remember either are two answers
    const rules = { ...DEVNET, remember: false }
    expect(decodeSignedTransaction(raw, rules)).not.toBe(decodeSignedTransaction(raw, rules))
  })

  it('hands the acceptor the tip cap its decode read (a bundle: the highest of its txs), so the dispatcher does not read the txs again', async () => {
    const told: Array<{ kind: string; tipCap: bigint | undefined }> = []
    const t = await appWith({ submissions: { accept: (input, decoded) => (told.push({ kind: input.kind, tipCap: decoded?.tipCap }), store.persist(input)) } })
    await call(t, 'eth_sendPrivateRawTransaction', { tx: A.raw })
    await call(t, 'eth_sendBundle', { txs: [A.raw, B.raw] })
    const tipOf = (raw: string) => transactionTipCap(raw)!
    const highest = tipOf(A.raw) > tipOf(B.raw) ? tipOf(A.raw) : tipOf(B.raw)
    expect(told).toEqual([
      { kind: 'private-tx', tipCap: tipOf(A.raw) },
      { kind: 'bundle', tipCap: highest },
    ])
  })

  it('upper-case hex digits are the same bytes: same hash, stored as the same submission', async () => {
    const t = await appWith()
    const upper = `0x${A.raw.slice(2).toUpperCase()}`
    expect((await call(t, 'eth_sendPrivateRawTransaction', { tx: upper })).result).toBe(txHashOf(A.raw))
    expect((await call(t, 'eth_sendPrivateRawTransaction', { tx: A.raw })).result).toBe(txHashOf(A.raw))
    expect(store.stats().open).toBe(1)
  })

  it('eth_notifyRawTransaction returns the tx hash and stores a notify submission', async () => {
    const t = await appWith()
    const answer = await call(t, 'eth_notifyRawTransaction', { tx: B.raw }, TOKEN_BETA)
    expect(answer.result).toBe(txHashOf(B.raw))
    const stored = await store.get(submissionId('notify', txHashOf(B.raw)))
    expect(stored?.record.kind).toBe('notify')
    expect(stored?.record.partnerId).toBe('beta')
    expect(stored?.record.rawTxs).toEqual([B.raw.toLowerCase()])
  })

  it('eth_sendBundle returns keccak256 of the concatenated tx hashes and stores the txs in order', async () => {
    const t = await appWith()
    const answer = await call(t, 'eth_sendBundle', { txs: [A.raw, B.raw] })
    const expected = keccak256(concat([txHashOf(A.raw), txHashOf(B.raw)]))
    expect(answer.result).toBe(expected)
    const stored = await store.get(submissionId('bundle', expected))
    expect(stored?.record.rawTxs).toEqual([A.raw.toLowerCase(), B.raw.toLowerCase()])
    expect(stored?.record.txHashes).toEqual([txHashOf(A.raw), txHashOf(B.raw)])
    expect(stored?.record.bundleOptions).toBeUndefined()
    // the order is part of the identity
    const reversed = await call(t, 'eth_sendBundle', { txs: [B.raw, A.raw] })
    expect(reversed.result).toBe(keccak256(concat([txHashOf(B.raw), txHashOf(A.raw)])))
    expect(reversed.result).not.toBe(expected)
  })

  it('eth_sendBundle matches the bundle-hash vectors (chain 1 transactions)', async () => {
    const t = await appWith({ decode: MAINNET })
    expect(bundleVectors.derived_examples_NOT_upstream.length).toBeGreaterThanOrEqual(3)
    for (const v of bundleVectors.derived_examples_NOT_upstream) {
      const answer = await call(t, 'eth_sendBundle', { txs: v.txs })
      expect(answer.error, v.note).toBeUndefined()
      expect(answer.result, v.note).toBe(v.bundleHash)
      const stored = await store.get(submissionId('bundle', v.bundleHash))
      expect(stored?.record.txHashes).toEqual(v.txHashes)
    }
    // the documented Flashbots example: the rule the handler applies gives its bundle hash
    expect(keccak256(concat(bundleVectors.documented_example.txHashes))).toBe(bundleVectors.documented_example.bundleHash)
  })

  it('eth_sendBundle keeps valid Flashbots options and stores them typed', async () => {
    const t = await appWith({ currentBlock: () => 100n, now: () => 1_700_000_000_000 })
    const answer = await call(t, 'eth_sendBundle', {
      txs: [A.raw, B.raw],
      blockNumber: '0x65',
      minTimestamp: 1_700_000_000,
      maxTimestamp: '0x6553f164',
      revertingTxHashes: [txHashOf(A.raw).toUpperCase().replace('0X', '0x')],
      replacementUuid: '7ac2ea25-7f4b-4e71-8d3a-6a8a4f5b8f2c',
    })
    expect(answer.error).toBeUndefined()
    const stored = await store.get(submissionId('bundle', answer.result as Hex))
    expect(stored?.record.bundleOptions).toEqual({
      blockNumber: 101n,
      minTimestamp: 1_700_000_000n,
      maxTimestamp: 0x6553f164n,
      revertingTxHashes: [txHashOf(A.raw)],
      replacementUuid: '7ac2ea25-7f4b-4e71-8d3a-6a8a4f5b8f2c',
    })
    // null members count as absent
    const plain = await call(t, 'eth_sendBundle', { txs: [B.raw], blockNumber: null, revertingTxHashes: null })
    expect(plain.result).toBe(keccak256(txHashOf(B.raw)))
  })

  it('works with the Dispatcher as the acceptor', async () => {
    const relay: BundleRelay = { name: 'r1', acceptsHashReference: false, sendBundle: async () => ({ relay: 'r1', attempts: 1 }) }
    const dispatcher = new Dispatcher({
      store,
      relays: [relay],
      heads: new ManualHeads(100n),
      inclusion: new ManualInclusion(),
      planner: new FixedPlanner('none'),
      simulate: simulator(),
      decode: DEVNET,
    })
    await dispatcher.start()
    const t = await appWith({ submissions: dispatcher })
    const answer = await call(t, 'eth_sendPrivateRawTransaction', { tx: A.raw })
    expect(answer.result).toBe(txHashOf(A.raw))
    await dispatcher.whenIdle()
    await dispatcher.stop()
    const stored = await store.get(submissionId('private-tx', A.hash))
    // simulated and planned on the head, then sent for the next block
    const types = stored?.events.map((e) => e.type) ?? []
    // the user's own bundle goes out right after the simulation; planning (here: nothing) follows
    expect(types.slice(0, 4)).toEqual(['received', 'targeting', 'simulated', 'relay-sending'])
    expect([...types.slice(4)].sort()).toEqual(['no-backrun', 'relay-result'])
  })
})

// ---------------------------------------------------------------------------------------------

describe('-32000: malformed input, each cause named', () => {
  it.each(['eth_sendPrivateRawTransaction', 'eth_notifyRawTransaction'])('%s: missing, mistyped and unknown members', async (method) => {
    const t = await appWith()
    expect(await rejected(t, method, {})).toMatchObject({ field: 'tx', reason: 'missing', message: 'missing field: tx' })
    expect(await rejected(t, method, { tx: null })).toMatchObject({ reason: 'missing' })
    expect(await rejected(t, method, { tx: 42 })).toMatchObject({ field: 'tx', reason: 'type' })
    expect(await rejected(t, method, { tx: [A.raw] })).toMatchObject({ field: 'tx', reason: 'type' })
    expect(await rejected(t, method, { tx: A.raw, preferences: {} })).toMatchObject({ field: 'preferences', reason: 'unknown_field', message: 'unknown field: preferences' })
    expect(store.stats().open).toBe(0)
  })

  it.each(['eth_sendPrivateRawTransaction', 'eth_notifyRawTransaction'])('%s: hex, size, type, chain id and signature problems', async (method) => {
    const t = await appWith()
    const cases: Array<[string, TxDecodeErrorReason]> = [
      ['0xzz', 'malformed_hex'],
      [A.raw.slice(2), 'malformed_hex'],
      [A.raw.slice(0, -1), 'malformed_hex'],
      ['0x', 'empty'],
      ['', 'empty'],
      [A.raw.slice(0, -2), 'rlp'], // truncated
      [`${A.raw}00`, 'rlp'], // trailing byte
      ['0x03c0', 'unsupported_type'], // blob transaction
      ['0x05c0', 'unsupported_type'], // unknown type byte
    ]
    for (const [tx, reason] of cases) {
      const r = await rejected(t, method, { tx })
      expect(r.reason, tx.slice(0, 12)).toBe(reason)
      expect(r.field).toBe('tx')
      expect(r.message).toMatch(new RegExp(`^tx: ${CAUSE[reason].source}: `))
    }
    // a mainnet transaction on the devnet service
    const vitalik = txVectors.find((v) => v.name === 'Vitalik_1')!
    const wrongChain = await rejected(t, method, { tx: vitalik.txbytes })
    expect(wrongChain).toMatchObject({ reason: 'chain_id' })
    expect(wrongChain.message).toMatch(/wrong chain id: .*chain id 1 does not match .* 31337/)
    // and a devnet transaction on a mainnet service
    const mainnet = await appWith({ decode: MAINNET })
    expect(await rejected(mainnet, method, { tx: A.raw })).toMatchObject({ reason: 'chain_id' })
    expect(store.stats().open).toBe(0)
  })

  it('too large a transaction (configurable maxRawTxBytes)', async () => {
    const bytes = (A.raw.length - 2) / 2
    const t = await appWith({ limits: { maxRawTxBytes: bytes - 1 } })
    const r = await rejected(t, 'eth_sendPrivateRawTransaction', { tx: A.raw })
    expect(r).toMatchObject({ reason: 'too_large', field: 'tx' })
    expect(r.message).toMatch(/too large/)
    const exact = await appWith({ limits: { maxRawTxBytes: bytes } })
    expect((await call(exact, 'eth_sendPrivateRawTransaction', { tx: A.raw })).result).toBe(txHashOf(A.raw))
  })

  it('the invalid ethereum/tests vectors are refused with the matching cause', async () => {
    const t = await appWith({ decode: MAINNET })
    const invalid = txVectors.filter((v) => 'exception' in newest(v))
    expect(invalid.length).toBeGreaterThanOrEqual(2)
    for (const v of invalid) {
      const { exception } = newest(v) as { exception: string }
      const r = await rejected(t, 'eth_sendPrivateRawTransaction', { tx: v.txbytes })
      const reason = EXCEPTION_REASON[exception]
      if (reason !== undefined) {
        expect(r.reason, v.name).toBe(reason)
        expect(r.message, v.name).toMatch(CAUSE[reason])
      }
    }
    // in a bundle the failing entry is named by its index
    const bad = invalid.find((v) => (newest(v) as { exception?: string }).exception === 'InvalidVRS')!
    const valid = bundleVectors.derived_examples_NOT_upstream[0].txs[0]
    const r = await rejected(t, 'eth_sendBundle', { txs: [valid, bad.txbytes] })
    expect(r).toMatchObject({ field: 'txs[1]', reason: 'signature' })
    expect(r.message).toMatch(/^txs\[1\]: invalid signature: /)
  })

  it('eth_sendBundle: missing, empty, too many, too large, mistyped entries', async () => {
    const t = await appWith({ limits: { maxBundleTxs: 2 } })
    expect(await rejected(t, 'eth_sendBundle', {})).toMatchObject({ field: 'txs', reason: 'missing' })
    expect(await rejected(t, 'eth_sendBundle', { txs: A.raw })).toMatchObject({ field: 'txs', reason: 'type' })
    const empty = await rejected(t, 'eth_sendBundle', { txs: [] })
    expect(empty).toMatchObject({ field: 'txs', reason: 'empty_bundle' })
    expect(empty.message).toMatch(/empty/)
    const many = await rejected(t, 'eth_sendBundle', { txs: [A.raw, B.raw, fx('eth-transfer').raw] })
    expect(many).toMatchObject({ reason: 'too_many_txs' })
    expect(many.message).toMatch(/at most 2/)
    expect(await rejected(t, 'eth_sendBundle', { txs: [A.raw, 7] })).toMatchObject({ field: 'txs[1]', reason: 'type' })
    expect(await rejected(t, 'eth_sendBundle', { txs: [A.raw], builders: ['x'] })).toMatchObject({ reason: 'unknown_field', field: 'builders' })

    const bytes = (A.raw.length - 2) / 2 + (B.raw.length - 2) / 2
    const small = await appWith({ limits: { maxBundleBytes: bytes - 1 } })
    const large = await rejected(small, 'eth_sendBundle', { txs: [A.raw, B.raw] })
    expect(large).toMatchObject({ reason: 'bundle_too_large' })
    expect(large.message).toMatch(new RegExp(`${bytes} bytes .* limit is ${bytes - 1}`))
    expect(DEFAULT_SUBMISSION_LIMITS).toEqual({ maxRawTxBytes: 131_072, maxBundleTxs: 16, maxBundleBytes: 300_000, maxBlocksAhead: 100 })
    expect(() => resolveSubmissionLimits({ maxBundleTxs: 0 })).toThrow(RangeError)
    expect(store.stats().open).toBe(0)
  })

  it('eth_sendBundle: the same transaction twice, and nonces one sender cannot execute in order', async () => {
    const t = await appWith()
    const dup = await rejected(t, 'eth_sendBundle', { txs: [A.raw, B.raw, A.raw] })
    expect(dup).toMatchObject({ field: 'txs[2]', reason: 'duplicate_tx' })
    expect(dup.message).toMatch(/same transaction as txs\[0\]/)
    // same bytes, other case: still the same transaction
    expect(await rejected(t, 'eth_sendBundle', { txs: [A.raw, `0x${A.raw.slice(2).toUpperCase()}`] })).toMatchObject({ reason: 'duplicate_tx' })
    // A and C: both from dev account 0 with nonce 0
    const conflict = await rejected(t, 'eth_sendBundle', { txs: [A.raw, C.raw] })
    expect(conflict).toMatchObject({ field: 'txs[1]', reason: 'nonce_conflict' })
    expect(conflict.message).toMatch(/nonce 0\) cannot follow txs\[0\] \(same sender, nonce 0\)/)
    expect(store.stats().open).toBe(0)
  })

  it('eth_sendBundle: malformed optional members', async () => {
    const t = await appWith({ currentBlock: () => 100n, now: () => 1_700_000_000_000 })
    const base = { txs: [A.raw, B.raw] }
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ blockNumber: 101 }, 'blockNumber', /hex quantity/],
      [{ blockNumber: '101' }, 'blockNumber', /hex quantity/],
      [{ blockNumber: '0x065' }, 'blockNumber', /hex quantity/],
      [{ blockNumber: '0x' }, 'blockNumber', /hex quantity/],
      [{ blockNumber: `0x1${'0'.repeat(16)}` }, 'blockNumber', /64 bits/],
      [{ blockNumber: '0x64' }, 'blockNumber', /not after the current block 100/],
      [{ blockNumber: '0xc9' }, 'blockNumber', /more than 100 blocks after/],
      [{ minTimestamp: -1 }, 'minTimestamp', /unix seconds/],
      [{ minTimestamp: 1.5 }, 'minTimestamp', /unix seconds/],
      [{ minTimestamp: '1700000000' }, 'minTimestamp', /unix seconds/],
      [{ minTimestamp: 1_700_000_100, maxTimestamp: 1_700_000_050 }, 'minTimestamp', /after maxTimestamp/],
      [{ maxTimestamp: 1_699_999_999 }, 'maxTimestamp', /already passed/],
      [{ revertingTxHashes: txHashOf(A.raw) }, 'revertingTxHashes', /array/],
      [{ revertingTxHashes: ['0x1234'] }, 'revertingTxHashes[0]', /32-byte/],
      [{ revertingTxHashes: [txHashOf(A.raw), txHashOf(A.raw)] }, 'revertingTxHashes[1]', /repeats/],
      [{ revertingTxHashes: [`0x${'ab'.repeat(32)}`] }, 'revertingTxHashes[0]', /not the hash of a transaction in txs/],
      [{ replacementUuid: 'not-a-uuid' }, 'replacementUuid', /UUID/],
      [{ replacementUuid: 12 }, 'replacementUuid', /UUID/],
    ]
    for (const [extra, field, message] of cases) {
      const r = await rejected(t, 'eth_sendBundle', { ...base, ...extra })
      expect(r.field, JSON.stringify(extra)).toBe(field)
      expect(r.reason).toBe('invalid_option')
      expect(r.message, JSON.stringify(extra)).toMatch(message)
    }
    expect(store.stats().open).toBe(0)
  })
})

// ---------------------------------------------------------------------------------------------

describe('-32603: nothing is acknowledged when the submission cannot be stored', () => {
  it.each([
    ['eth_sendPrivateRawTransaction', { tx: A.raw }, 'private-tx', /the transaction could not be stored; nothing was accepted/],
    ['eth_sendBundle', { txs: [A.raw, B.raw] }, 'bundle', /the bundle could not be stored; nothing was accepted/],
    ['eth_notifyRawTransaction', { tx: A.raw }, 'notify', /the notification could not be stored; it was dropped/],
  ] as const)('%s on a closed store', async (method, params, kind, message) => {
    const t = await appWith()
    await store.close()
    const answer = await call(t, method, params)
    expect(answer.result).toBeUndefined()
    expect(answer.error?.code).toBe(-32603)
    expect(answer.error?.message).toMatch(message)
    expect(answer.error?.data).toEqual({ reason: 'persistence' })
    // reopened: nothing was written
    await store.open()
    expect(store.stats()).toEqual({ open: 0, finished: 0 })
    const hash = kind === 'bundle' ? keccak256(concat([txHashOf(A.raw), txHashOf(B.raw)])) : txHashOf(A.raw)
    expect(await store.get(submissionId(kind, hash))).toBeUndefined()
  })

  it('a full outbox refuses with -32603 and stores nothing; a retry after space frees up succeeds', async () => {
    await store.close()
    store = new OutboxStore(join(dir.path, 'outbox'), { maxOpen: 1, writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 2 } })
    await store.open()
    const t = await appWith()
    expect((await call(t, 'eth_sendPrivateRawTransaction', { tx: A.raw })).result).toBe(txHashOf(A.raw))
    const full = await call(t, 'eth_sendPrivateRawTransaction', { tx: B.raw })
    expect(full.error?.code).toBe(-32603)
    expect(full.error?.message).toMatch(/at capacity.*nothing was accepted/)
    expect(full.error?.data).toEqual({ reason: 'outbox_full' })
    expect(await store.get(submissionId('private-tx', txHashOf(B.raw)))).toBeUndefined()
    await store.append(submissionId('private-tx', txHashOf(A.raw)), [{ type: 'dropped', at: Date.now(), reason: 'test' }])
    expect((await call(t, 'eth_sendPrivateRawTransaction', { tx: B.raw })).result).toBe(txHashOf(B.raw))
  })

  it('an unexpected acceptor failure is a plain -32603 internal error', async () => {
    const t = await appWith({ submissions: { accept: async () => Promise.reject(new Error('disk on fire: /secret/path')) } })
    const answer = await call(t, 'eth_sendPrivateRawTransaction', { tx: A.raw })
    expect(answer.error).toEqual({ code: -32603, message: 'internal error' })
  })
})
