/**
 * The local builder resolves competing bundles as real builders do (mev-geth / rbuilder), over
 * real HTTP: every bundle for a block is simulated at the top of the block, ordered by what it
 * pays the coinbase per gas, and merged greedily; a bundle sharing a transaction with a merged
 * one, or failing after it, is outbid; one failing at the top of the block is invalid. What
 * became of each (bundle, block) is answered by flashbots_getBundleStatsV2.
 *
 * Users and searchers sign their own transactions here (plain transfers, a searcher's
 * "backrun" pays the coinbase directly), from fresh keys funded in block 1, so the test does not
 * depend on which dev accounts the fixtures fund beyond the first.
 */
import { keccak256, parseEther, parseGwei, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { DEVNET_BUILDER_COINBASE, type LocalBuilder } from '../../src/devnet/local-builder.ts'
import { bundleHash } from '../../src/tx/index.ts'
import { loadFixtureTxs, loadRegistry } from '../support/devnet.ts'
import { closeBuilders, ok, rpc, startBuilder } from './local-builder-harness.ts'

const registry = loadRegistry()
const CHAIN_ID = registry.chainId
const FUNDER = registry.devAccounts.accounts[0].privateKey
const SINK: Address = '0x00000000000000000000000000000000000d00d1'
const SWAP_B = loadFixtureTxs().find((t) => t.name === 'v2-swapExactETHForTokens-large')!

interface Signed {
  raw: Hex
  hash: Hex
}

/** A type-2 transfer; `tip` is the priority fee per gas. */
async function transfer(key: Hex, nonce: number, opts: { to?: Address; value?: bigint; tip?: bigint } = {}): Promise<Signed> {
  const raw = await privateKeyToAccount(key).signTransaction({
    type: 'eip1559',
    chainId: CHAIN_ID,
    nonce,
    to: opts.to ?? SINK,
    value: opts.value ?? 1n,
    gas: 21_000n,
    maxFeePerGas: parseGwei('50'),
    maxPriorityFeePerGas: opts.tip ?? parseGwei('1'),
  })
  return { raw, hash: keccak256(raw) }
}

/** A searcher's backrun: pays the builder `pay` wei directly (and a 1 gwei tip). */
const backrun = (key: Hex, nonce: number, pay: bigint) => transfer(key, nonce, { to: DEVNET_BUILDER_COINBASE, value: pay })

interface Stats {
  isHighPriority: boolean
  isSimulated: boolean
  simulatedAt: string | null
  receivedAt: string | null
  consideredByBuildersAt: Array<{ pubkey: string; timestamp: string }>
  sealedByBuildersAt: Array<{ pubkey: string; timestamp: string }>
  status: string
  reason?: string
  includedBlock?: string
}

const statsOf = (url: string, hash: Hex, block: number) => ok<Stats>(url, 'flashbots_getBundleStatsV2', [{ bundleHash: hash, blockNumber: `0x${block.toString(16)}` }])
const send = async (url: string, txs: Signed[], block: number, extra: object = {}) =>
  (await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: txs.map((t) => t.raw), blockNumber: `0x${block.toString(16)}`, ...extra }])).bundleHash

/** `n` fresh keys, funded with 1 ETH each in the next block (public transactions of the funder). */
async function fundedKeys(builder: LocalBuilder, url: string, n: number): Promise<Hex[]> {
  const keys = Array.from({ length: n }, () => generatePrivateKey())
  const start = Number(await ok<string>(url, 'eth_getTransactionCount', [privateKeyToAccount(FUNDER).address, 'latest']))
  for (const [i, key] of keys.entries()) {
    const tx = await transfer(FUNDER, start + i, { to: privateKeyToAccount(key).address.toLowerCase() as Address, value: parseEther('1') })
    await ok(url, 'eth_sendRawTransaction', [tx.raw])
  }
  const built = await builder.mineNow()
  expect(built.receipts).toHaveLength(n)
  return keys
}

/** A builder whose clock runs `action` once, at its next reading: inside a build, its first simulation's time. */
async function builderWithHook() {
  let hook: (() => void) | undefined
  const started = await startBuilder({
    now: () => {
      const h = hook
      hook = undefined
      h?.()
      return Date.now()
    },
  })
  return { ...started, duringBuild: (action: () => void) => (hook = action) }
}

afterEach(closeBuilders)

describe('LocalBuilder: competing bundles, as a real builder resolves them', () => {
  it('two bundles sharing a user tx: the one whose backrun pays more lands, the other is outbid naming the conflict; the fallback too', async () => {
    const { builder, url, errors } = await startBuilder()
    const [searcherA, searcherB] = await fundedKeys(builder, url, 2)
    const user: Signed = { raw: SWAP_B.raw as Hex, hash: SWAP_B.hash as Hex }
    // the cheaper backrun bundle and the fallback arrive first
    const cheap = await send(url, [user, await backrun(searcherA, 0, parseEther('0.001'))], 2)
    const fallback = await send(url, [user], 2)
    const rich = await send(url, [user, await backrun(searcherB, 0, parseEther('0.01'))], 2)
    const built = await builder.mineNow()
    expect(built.bundles).toEqual([rich])
    expect(built.receipts.map((r) => r.bundleHash)).toEqual([rich, rich])
    expect(built.receipts[0].transactionHash).toBe(user.hash)
    for (const loser of [cheap, fallback]) {
      const stats = await statsOf(url, loser, 2)
      expect(stats.status).toBe('outbid')
      expect(stats.reason).toContain(`conflicts with bundle ${rich}`)
      expect(stats.reason).toContain(user.hash)
    }
    expect(await statsOf(url, rich, 2)).toMatchObject({ status: 'included', includedBlock: '0x2' })
    // the paying bundle's payment reached the coinbase
    const paid = BigInt(await ok<string>(url, 'eth_getBalance', [DEVNET_BUILDER_COINBASE, '0x2'])) - BigInt(await ok<string>(url, 'eth_getBalance', [DEVNET_BUILDER_COINBASE, '0x1']))
    expect(paid).toBeGreaterThan(parseEther('0.01'))
    expect(errors).toEqual([])
  })

  it('a backrun bundle whose backrun nonce is stale is invalid at the top of the block; its fallback lands in the same block', async () => {
    const { builder, url } = await startBuilder()
    const [searcher, userKey] = await fundedKeys(builder, url, 2)
    // the searcher's nonce 0 is used by block 2
    await ok(url, 'eth_sendRawTransaction', [(await transfer(searcher, 0)).raw])
    await builder.mineNow()
    const user = await transfer(userKey, 0)
    const withBackrun = await send(url, [user, await backrun(searcher, 0, parseEther('0.01'))], 3)
    const fallback = await send(url, [user], 3)
    const built = await builder.mineNow()
    expect(built.block.number).toBe(3n)
    expect(built.bundles).toEqual([fallback])
    expect(built.receipts.map((r) => r.transactionHash)).toEqual([user.hash])
    const stats = await statsOf(url, withBackrun, 3)
    expect(stats.status).toBe('invalid')
    expect(stats.reason).toMatch(/tx 1 .* cannot be included: .*nonce/i)
    expect(stats.isSimulated).toBe(true)
    expect(await statsOf(url, fallback, 3)).toMatchObject({ status: 'included', includedBlock: '0x3' })
  })

  it("ten users' backrun bundles (and their fallbacks) for one block all land when valid together", async () => {
    const { builder, url } = await startBuilder()
    const keys = await fundedKeys(builder, url, 20)
    const users = keys.slice(0, 10)
    const searchers = keys.slice(10)
    const backrunBundles: Hex[] = []
    const fallbacks: Hex[] = []
    for (let i = 0; i < 10; i++) {
      const user = await transfer(users[i], 0, { tip: parseGwei(String(1 + i)) })
      backrunBundles.push(await send(url, [user, await backrun(searchers[i], 0, parseEther('0.001') * BigInt(i + 1))], 2))
      fallbacks.push(await send(url, [user], 2))
    }
    const built = await builder.mineNow()
    expect(new Set(built.bundles)).toEqual(new Set(backrunBundles))
    expect(built.receipts).toHaveLength(20)
    for (const f of fallbacks) expect((await statsOf(url, f, 2)).status).toBe('outbid')
    // ordered by payment per gas: the most paying first
    expect(built.bundles[0]).toBe(backrunBundles[9])
    expect(builder.pending.bundles).toBe(0)
  })

  it('orders by payment per gas, not arrival: a later bundle paying more lands first, and the earlier one fails after it (outbid, state taken)', async () => {
    const { builder, url } = await startBuilder()
    const [u1, u2, u3, u4, searcher] = await fundedKeys(builder, url, 5)
    // plain tips: the later, higher-tip bundle goes first
    const low = await send(url, [await transfer(u1, 0, { tip: parseGwei('1') })], 2)
    const high = await send(url, [await transfer(u2, 0, { tip: parseGwei('7') })], 2)
    // both backruns use the searcher's nonce 0 (as every backrun signed for one block does): the
    // more paying one, sent later, takes it; the other fails after it
    const u3tx = await transfer(u3, 0)
    const firstSent = await send(url, [await transfer(u4, 0), await backrun(searcher, 0, parseEther('0.002'))], 2)
    const secondSent = await send(url, [u3tx, await backrun(searcher, 0, parseEther('0.02'))], 2)
    const built = await builder.mineNow()
    expect(built.bundles).toEqual([secondSent, high, low])
    const stats = await statsOf(url, firstSent, 2)
    expect(stats.status).toBe('outbid')
    expect(stats.reason).toMatch(/^fails after the bundles merged before it: tx 1 .* cannot be included: .*nonce/i)
    expect(built.dropped).toEqual([{ bundleHash: firstSent, reason: stats.reason }])
    expect(built.outcomes.find((o) => o.bundleHash === firstSent)?.status).toBe('outbid')
  })

  it("a user's second transaction, bundled apart and invalid at the top of the block (nonce gap), lands behind its first in the same block", async () => {
    const { builder, url } = await startBuilder()
    const [user] = await fundedKeys(builder, url, 1)
    const first = await transfer(user, 0, { tip: parseGwei('0.1') })
    const second = await transfer(user, 1, { tip: parseGwei('2') })
    const third = await transfer(user, 2, { tip: parseGwei('3') })
    // arrival and payment order both put the later nonces first
    const b3 = await send(url, [third], 2)
    const b2 = await send(url, [second], 2)
    const b1 = await send(url, [first], 2)
    const built = await builder.mineNow()
    expect(built.receipts.map((r) => r.transactionHash)).toEqual([first.hash, second.hash, third.hash])
    for (const b of [b1, b2, b3]) expect((await statsOf(url, b, 2)).status).toBe('included')
  })

  it("public transactions: highest tip first, each sender's in nonce order", async () => {
    const { builder, url } = await startBuilder()
    const [a, b] = await fundedKeys(builder, url, 2)
    const a0 = await transfer(a, 0, { tip: parseGwei('1') })
    const a1 = await transfer(a, 1, { tip: parseGwei('9') })
    const b0 = await transfer(b, 0, { tip: parseGwei('5') })
    // arrival: a's nonce 1 first (it waits for nonce 0), then b, then a's nonce 0
    for (const t of [a1, b0, a0]) await ok(url, 'eth_sendRawTransaction', [t.raw])
    const built = await builder.mineNow()
    // b (5 gwei) beats a's first (1 gwei); a's nonce 1 (9 gwei) only competes once nonce 0 is in
    expect(built.receipts.map((r) => r.transactionHash)).toEqual([b0.hash, a0.hash, a1.hash])
  })

  it('a bundle resent for three blocks has one record per block', async () => {
    const { builder, url, source } = await startBuilder()
    const [key] = await fundedKeys(builder, url, 1)
    const tx = await transfer(key, 0)
    const hash = bundleHash([tx.hash])
    const block3 = source.latest().block.timestamp + 24n
    // block 2: not yet valid (minTimestamp is block 3's); block 3: lands; block 4: already on chain
    expect(await send(url, [tx], 2, { minTimestamp: Number(block3) })).toBe(hash)
    expect(await send(url, [tx], 3)).toBe(hash)
    expect(await send(url, [tx], 4)).toBe(hash)
    expect(builder.pending.bundles).toBe(3)
    for (const block of [2, 3, 4]) expect((await statsOf(url, hash, block)).status).toBe('pending')
    for (let i = 0; i < 3; i++) await builder.mineNow()
    expect(await statsOf(url, hash, 2)).toMatchObject({ status: 'invalid', reason: expect.stringContaining('minTimestamp') })
    expect(await statsOf(url, hash, 3)).toMatchObject({ status: 'included', includedBlock: '0x3' })
    expect(await statsOf(url, hash, 4)).toMatchObject({ status: 'invalid', reason: expect.stringContaining('already included in block 3') })
    expect(await ok(url, 'devnet_bundleStatus', [hash])).toMatchObject({ status: 'included', blockNumber: '0x3' })
    expect(builder.pending.bundles).toBe(0)
  })

  it('flashbots_getBundleStatsV2: Flashbots fields plus status, reason, includedBlock; unknown for an unknown hash; -32602 for bad params', async () => {
    const { builder, url } = await startBuilder()
    const [key] = await fundedKeys(builder, url, 1)
    const hash = await send(url, [await transfer(key, 0)], 2)
    const pending = await statsOf(url, hash, 2)
    expect(pending).toEqual({
      isHighPriority: false,
      isSimulated: false,
      simulatedAt: null,
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      consideredByBuildersAt: [],
      sealedByBuildersAt: [],
      status: 'pending',
    })
    await builder.mineNow()
    const included = await statsOf(url, hash, 2)
    expect(included).toEqual({
      isHighPriority: false,
      isSimulated: true,
      simulatedAt: expect.any(String),
      receivedAt: pending.receivedAt,
      consideredByBuildersAt: [{ pubkey: DEVNET_BUILDER_COINBASE, timestamp: expect.any(String) }],
      sealedByBuildersAt: [{ pubkey: DEVNET_BUILDER_COINBASE, timestamp: expect.any(String) }],
      status: 'included',
      includedBlock: '0x2',
    })
    expect(Date.parse(included.simulatedAt!)).toBeGreaterThanOrEqual(Date.parse(included.receivedAt!))
    // the same hash for a block it was not sent for, and a hash never seen
    expect((await statsOf(url, hash, 3)).status).toBe('unknown')
    expect(await statsOf(url, `0x${'ab'.repeat(32)}`, 2)).toEqual({
      isHighPriority: false,
      isSimulated: false,
      simulatedAt: null,
      receivedAt: null,
      consideredByBuildersAt: [],
      sealedByBuildersAt: [],
      status: 'unknown',
    })
    expect((await rpc(url, 'flashbots_getBundleStatsV2', [{ bundleHash: hash }])).error).toMatchObject({ code: -32602, message: expect.stringContaining('blockNumber') })
    expect((await rpc(url, 'flashbots_getBundleStatsV2', [{ bundleHash: '0x12', blockNumber: '0x2' }])).error?.code).toBe(-32602)
    expect((await rpc(url, 'flashbots_getBundleStatsV2', [])).error?.code).toBe(-32602)
  })

  it('a bundle for a block already being built when it arrives is expired', async () => {
    const { builder, url, duringBuild } = await builderWithHook()
    const [a, b] = await fundedKeys(builder, url, 2)
    await send(url, [await transfer(a, 0)], 2)
    const late = await transfer(b, 0)
    let lateHash: Hex | undefined
    // called from inside the build of block 2 (its first simulation's time)
    duringBuild(() => {
      lateHash = builder.sendBundle({ txs: [{ raw: late.raw }], blockNumber: 2n }).bundleHash
    })
    const built = await builder.mineNow()
    expect(lateHash).toBeDefined()
    expect(built.outcomes).toContainEqual({ bundleHash: lateHash, status: 'expired', reason: expect.stringContaining('built before') })
    expect(await statsOf(url, lateHash!, 2)).toMatchObject({ status: 'expired' })
    expect(builder.pending.bundles).toBe(0)
  })

  it('a bundle cancelled or replaced while its block is built is settled by that build, once (a cancellation then is too late)', async () => {
    const { builder, url, duringBuild } = await builderWithHook()
    const [a, b, c] = await fundedKeys(builder, url, 3)
    const cancelled = (await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [(await transfer(a, 0)).raw], blockNumber: '0x2', replacementUuid: 'u-cancel' }])).bundleHash
    const replaced = (await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [(await transfer(b, 0)).raw], blockNumber: '0x2', replacementUuid: 'u-replace' }])).bundleHash
    const replacement = await transfer(c, 0)
    let replacementHash: Hex | undefined
    const before = builder.totals.bundles
    // from inside the build of block 2 (its first simulation's time)
    duringBuild(() => {
      expect(builder.cancelBundle('u-cancel')).toBe(1)
      replacementHash = builder.sendBundle({ txs: [{ raw: replacement.raw }], blockNumber: 2n, replacementUuid: 'u-replace' }).bundleHash
    })
    const built = await builder.mineNow()
    expect(replacementHash).toBeDefined()
    expect(new Set(built.bundles)).toEqual(new Set([cancelled, replaced]))
    expect(await statsOf(url, cancelled, 2)).toMatchObject({ status: 'included', includedBlock: '0x2' })
    expect(await statsOf(url, replaced, 2)).toMatchObject({ status: 'included', includedBlock: '0x2' })
    // the replacement came for a block already being built
    expect(await statsOf(url, replacementHash!, 2)).toMatchObject({ status: 'expired' })
    const after = builder.totals.bundles
    expect({ included: after.included - before.included, invalid: after.invalid - before.invalid, expired: after.expired - before.expired }).toEqual({ included: 2, invalid: 0, expired: 1 })
    expect(builder.pending.bundles).toBe(0)
  })

  it('builds a block in slices of the event loop (sliceMs): requests are answered while it is built, and the block is the same', async () => {
    /** turns of the event loop while `run` is pending, and an HTTP answer fetched meanwhile */
    const keys = Array.from({ length: 24 }, () => generatePrivateKey())
    const during = async (sliceMs: number) => {
      const { builder, url } = await startBuilder({ sliceMs })
      // the same keys funded the same way on both builders: the same blocks
      for (const [i, key] of keys.entries()) {
        await ok(url, 'eth_sendRawTransaction', [(await transfer(FUNDER, i, { to: privateKeyToAccount(key).address.toLowerCase() as Address, value: parseEther('1') })).raw])
      }
      expect((await builder.mineNow()).receipts).toHaveLength(24)
      for (const [i, key] of keys.entries()) await send(url, [await transfer(key, 0, { tip: parseGwei(String(1 + (i % 5))) })], 2)
      let turns = 0
      let ended = false
      const count = (): void => {
        if (ended) return
        turns++
        setImmediate(count)
      }
      setImmediate(count)
      // asked while the block is being built: answered with the head before it (block 1) only when
      // the build gives the event loop turns in which the builder's server reads the request
      const answered = ok<string>(url, 'eth_blockNumber').then((n) => ({ n, ended }))
      const built = await builder.mineNow()
      ended = true
      return { turns, answer: await answered, built }
    }
    const sliced = await during(1)
    const whole = await during(60_000)
    expect(sliced.built.receipts).toHaveLength(24)
    expect(sliced.built.receipts.map((r) => r.transactionHash)).toEqual(whole.built.receipts.map((r) => r.transactionHash))
    expect(sliced.built.block.hash).toBe(whole.built.block.hash)
    expect(sliced.turns).toBeGreaterThan(whole.turns)
    expect(sliced.answer).toEqual({ n: '0x1', ended: false })
    expect(whole.answer).toEqual({ n: '0x2', ended: true })
  })

  it('records are bounded: by count (maxTrackedBundles) and by age (bundleStatsBlocks); nothing pending is left behind', async () => {
    const { builder, url } = await startBuilder({ maxTrackedBundles: 6, bundleStatsBlocks: 2 })
    const keys = await fundedKeys(builder, url, 3)
    const sent: Array<{ hash: Hex; block: number }> = []
    for (let block = 2; block < 8; block++) {
      for (const [i, key] of keys.entries()) {
        // each key's next nonce, twice: one lands, the other conflicts or fails after it
        const nonce = block - 2
        sent.push({ hash: await send(url, [await transfer(key, nonce, { tip: parseGwei(String(1 + i)) })], block), block })
        sent.push({ hash: await send(url, [await transfer(key, nonce, { tip: parseGwei(String(1 + i)), value: 2n })], block), block })
      }
      await builder.mineNow()
      expect(builder.trackedBundles).toBeLessThanOrEqual(6)
      expect(builder.pending.bundles).toBe(0)
    }
    // the head is 7: block 4 and earlier are more than 2 blocks behind
    for (const s of sent.filter((x) => x.block <= 4)) expect((await statsOf(url, s.hash, s.block)).status).toBe('unknown')
    const last = sent.filter((x) => x.block === 7)
    expect((await Promise.all(last.map((s) => statsOf(url, s.hash, s.block)))).map((s) => s.status).sort()).toEqual(['included', 'included', 'included', 'outbid', 'outbid', 'outbid'])
  })
})
