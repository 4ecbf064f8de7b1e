/**
 * The devnet's local builder over real HTTP: bundles land atomically in the block they target
 * (or are dropped entirely, and say why), public transactions follow them, hash references need
 * the transaction sent first, X-Flashbots-Signature is verified, receipts answer, blocks keep
 * coming. Its blocks replayed on anvil: local-builder.anvil.test.ts.
 */
import { encodeFunctionData, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import type { LayeredStateReader } from '../../src/chain/memory/layered-state-reader.ts'
import type { Address, BlockInfo } from '../../src/chain/types.ts'
import { RelayClient } from '../../src/submission/relay-client.ts'
import { RpcInclusionChecker } from '../../src/submission/rpc-inclusion-checker.ts'
import { SearcherKey } from '../../src/submission/searcher-key.ts'
import { bundleHash } from '../../src/tx/index.ts'
import { lower, tokenAddress } from '../support/devnet.ts'
import { registry, SWAP_A, SWAP_B, SWAP_C, SWAP_D, TRANSFER, REVERTS, ERC20, devKey, rpc, ok, hex, startBuilder, closeBuilders, waitFor, type ReceiptJson } from './local-builder-harness.ts'

afterEach(closeBuilders)

describe('LocalBuilder over HTTP', () => {
  it('forgets a block with its receipts once historyBlocks newer blocks are built: its memory follows the window, not the chain', async () => {
    const { builder, url } = await startBuilder({ historyBlocks: 2 })
    await ok(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw], blockNumber: '0x1' }])
    await builder.mineNow()
    await builder.mineNow()
    // block 1 is still one of the last two: its receipt and state answer
    expect(await ok(url, 'eth_getTransactionReceipt', [SWAP_A.hash])).toMatchObject({ blockNumber: '0x1', status: '0x1' })
    expect(await ok(url, 'eth_getTransactionCount', [SWAP_A.from, '0x1'])).toBe('0x1')
    await builder.mineNow()
    // blocks 2 and 3 are kept now: block 1 is forgotten, its receipt with it
    expect(await ok(url, 'eth_getTransactionReceipt', [SWAP_A.hash])).toBeNull()
    const gone = await rpc(url, 'eth_getTransactionCount', [SWAP_A.from, '0x1'])
    expect(gone.error?.message).toMatch(/block 1 is no longer kept: the last 2 blocks are/)
    // the chain itself moved on: the sender's nonce is still used at the head
    expect(await ok(url, 'eth_getTransactionCount', [SWAP_A.from, 'latest'])).toBe('0x1')
  })

  it('a bundle of two transactions lands atomically in the block it targets, in order, with receipts', async () => {
    const { builder, url, source } = await startBuilder()
    const answer = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw, SWAP_B.raw], blockNumber: '0x1' }])
    expect(answer.bundleHash).toBe(bundleHash([SWAP_A.hash, SWAP_B.hash]))
    expect(await ok(url, 'eth_getTransactionReceipt', [SWAP_A.hash])).toBeNull()
    expect(await ok(url, 'devnet_bundleStatus', [answer.bundleHash])).toMatchObject({ status: 'pending', blockNumber: '0x1' })

    const built = await builder.mineNow()
    expect(built.block.number).toBe(1n)
    expect(built.bundles).toEqual([answer.bundleHash])
    expect(await ok(url, 'eth_blockNumber')).toBe('0x1')
    const ra = await ok<ReceiptJson>(url, 'eth_getTransactionReceipt', [SWAP_A.hash])
    const rb = await ok<ReceiptJson>(url, 'eth_getTransactionReceipt', [SWAP_B.hash])
    expect(ra).toMatchObject({ transactionHash: SWAP_A.hash, blockNumber: '0x1', status: '0x1', transactionIndex: '0x0', gasUsed: hex(BigInt(SWAP_A.expected.gasUsed)) })
    expect(rb).toMatchObject({ transactionHash: SWAP_B.hash, blockNumber: '0x1', status: '0x1', transactionIndex: '0x1', bundleHash: answer.bundleHash })
    expect(ra.blockHash).toBe(source.latest().block.hash)
    expect(BigInt(ra.gasUsed) + BigInt(rb.gasUsed)).toBe(source.latest().block.gasUsed)
    // the logs, kept packed (kept-receipts.ts), answer as anvil recorded them for the fixture, and as the block built them
    const fields = (logs: ReadonlyArray<{ address: string; topics: readonly string[]; data: string }>) => logs.map(({ address, topics, data }) => ({ address: address.toLowerCase(), topics, data }))
    expect(SWAP_A.expected.logs.length).toBeGreaterThan(2)
    expect(fields(ra.logs)).toEqual(fields(SWAP_A.expected.logs))
    expect(ra.logs.map((l) => l.logIndex)).toEqual(ra.logs.map((_, i) => hex(BigInt(i))))
    expect(builder.receipt(SWAP_B.hash)?.logs).toEqual(built.receipts[1].logs)
    expect(fields(rb.logs)).toEqual(fields(built.receipts[1].logs))
    expect(await ok(url, 'devnet_bundleStatus', [answer.bundleHash])).toMatchObject({ status: 'included', blockNumber: '0x1' })
    // both senders moved on: nonce 1 at the head, 0 at the genesis (kept history)
    expect(await ok(url, 'eth_getTransactionCount', [SWAP_B.from, 'latest'])).toBe('0x1')
    expect(await ok(url, 'eth_getTransactionCount', [SWAP_B.from, '0x0'])).toBe('0x0')
    // the swaps' USDC reached account 0, as eth_call reads it at the head and at the genesis
    const balanceOf = encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [SWAP_A.from as Address] })
    const usdc = tokenAddress(registry, 'USDC')
    const usdcAt = async (block: string) => BigInt(await ok<string>(url, 'eth_call', [{ to: usdc, data: balanceOf }, block]))
    expect((await usdcAt('latest')) - (await usdcAt('0x0'))).toBe(BigInt(SWAP_A.expected.balanceChanges[0].deltas.USDC))
    expect(await ok<string>(url, 'eth_getCode', [usdc])).toMatch(/^0x60/)
    const block = await ok<{ transactions: string[]; parentHash: string }>(url, 'eth_getBlockByNumber', ['0x1', false])
    expect(block.transactions).toEqual([SWAP_A.hash, SWAP_B.hash])
    expect(block.parentHash).toBe(`0x${'00'.repeat(32)}`)
  })

  it('a bundle with a reverting transaction is dropped entirely, unless revertingTxHashes lists it', async () => {
    const { builder, url, source } = await startBuilder()
    const genesis = source.latest()
    const senderC = lower(SWAP_C.from)
    const balanceBefore = await ok<string>(url, 'eth_getBalance', [senderC])
    const dropped = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_C.raw, REVERTS.raw], blockNumber: '0x1' }])
    const b1 = await builder.mineNow()
    expect(b1.block.number).toBe(1n)
    expect(b1.receipts).toEqual([])
    expect(b1.block.gasUsed).toBe(0n)
    expect(b1.dropped).toEqual([{ bundleHash: dropped.bundleHash, reason: expect.stringContaining('reverted') }])
    expect(await ok(url, 'eth_getTransactionReceipt', [SWAP_C.hash])).toBeNull()
    expect(await ok(url, 'eth_getTransactionReceipt', [REVERTS.hash])).toBeNull()
    expect(await ok(url, 'eth_getBalance', [senderC])).toBe(balanceBefore)
    expect(await ok(url, 'eth_getTransactionCount', [senderC])).toBe('0x0')
    expect((source.latest() as LayeredStateReader).changes.accounts.size).toBe(0)
    expect(await source.latest().getStorage(lower(SWAP_C.pools[0]), 8n)).toBe(await genesis.getStorage(lower(SWAP_C.pools[0]), 8n))
    const status = await ok<{ status: string; reason: string }>(url, 'devnet_bundleStatus', [dropped.bundleHash])
    expect(status.status).toBe('dropped')
    expect(status.reason).toMatch(/tx 1 .* reverted/)

    await ok(url, 'eth_sendBundle', [{ txs: [SWAP_C.raw, REVERTS.raw], blockNumber: '0x2', revertingTxHashes: [REVERTS.hash] }])
    const b2 = await builder.mineNow()
    expect(b2.receipts.map((r) => [r.transactionHash, r.status])).toEqual([
      [SWAP_C.hash, 1],
      [REVERTS.hash, 0],
    ])
    expect(await ok(url, 'eth_getTransactionReceipt', [REVERTS.hash])).toMatchObject({ status: '0x0', blockNumber: '0x2' })
  })

  it('a transaction that cannot be included (nonce) drops the whole bundle; a conflicting later bundle is dropped', async () => {
    const { builder, url } = await startBuilder()
    // SWAP_A and REVERTS are both account 0 at nonce 0: the second can never follow the first
    const rejected = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw, SWAP_A.raw, REVERTS.raw], blockNumber: '0x1', revertingTxHashes: [REVERTS.hash] }])
    const first = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_C.raw], blockNumber: '0x1' }])
    const conflicting = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_D.raw, SWAP_C.raw], blockNumber: '0x1' }])
    const built = await builder.mineNow()
    expect(built.bundles).toEqual([first.bundleHash])
    expect(built.receipts.map((r) => r.transactionHash)).toEqual([SWAP_C.hash])
    const reasons = new Map(built.dropped.map((d) => [d.bundleHash, d.reason]))
    expect(reasons.get(rejected.bundleHash)).toMatch(/tx 2 .* cannot be included: .*nonce/)
    expect(reasons.get(conflicting.bundleHash)).toMatch(/already in this block/)
    expect(await ok(url, 'eth_getTransactionReceipt', [SWAP_D.hash])).toBeNull()
    expect(await ok(url, 'eth_getTransactionReceipt', [SWAP_B.hash])).toBeNull()
  })

  it('verifies X-Flashbots-Signature: a good one is recorded, a wrong one is refused with 403 and nothing is queued', async () => {
    const { builder, url } = await startBuilder()
    const params = [{ txs: [SWAP_A.raw], blockNumber: '0x1' }]
    const wrongSigner = await rpc(url, 'eth_sendBundle', params, { key: devKey(2), as: privateKeyToAccount(devKey(3)).address })
    expect(wrongSigner.status).toBe(403)
    expect(wrongSigner.error?.message).toMatch(/X-Flashbots-Signature/)
    const tampered = await rpc(url, 'eth_sendBundle', params, { key: devKey(2), tamper: true })
    expect(tampered.status).toBe(403)
    const garbage = await fetch(url, { method: 'POST', headers: { 'X-Flashbots-Signature': 'nonsense' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }) })
    expect(garbage.status).toBe(403)
    expect(builder.pending.bundles).toBe(0)

    const good = await rpc(url, 'eth_sendBundle', params, { key: devKey(2) })
    expect(good.status).toBe(200)
    const hash = (good.result as { bundleHash: Hex }).bundleHash
    expect(builder.bundleStatus(hash)?.signer).toBe(lower(privateKeyToAccount(devKey(2)).address))
    // unsigned requests are accepted (a local devnet)
    expect((await rpc(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw], blockNumber: '0x1' }])).result).toBeDefined()
    expect((await builder.mineNow()).receipts).toHaveLength(2)
  })

  it("hash references: refused until the transaction was sent with eth_sendRawTransaction; then it lands first, as our RelayClient sends it", async () => {
    const { builder, url, source } = await startBuilder()
    const unknown = await rpc(url, 'eth_sendBundle', [{ txs: [{ hash: SWAP_A.hash }, SWAP_B.raw], blockNumber: '0x1' }])
    expect(unknown.error?.code).toBe(-32000)
    expect(unknown.error?.message).toMatch(/unknown to this builder/)

    expect(await ok(url, 'eth_sendRawTransaction', [SWAP_A.raw])).toBe(SWAP_A.hash)
    // the object form
    const objectForm = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [{ hash: SWAP_A.hash }, SWAP_B.raw], blockNumber: '0x1' }])
    expect(objectForm.bundleHash).toBe(bundleHash([SWAP_A.hash, SWAP_B.hash]))
    const built = await builder.mineNow()
    expect(built.receipts.map((r) => [r.transactionHash, r.bundleHash])).toEqual([
      [SWAP_A.hash, objectForm.bundleHash],
      [SWAP_B.hash, objectForm.bundleHash],
    ])
    expect(builder.pending).toEqual({ bundles: 0, transactions: 0 })

    // the bare-hash form of our own RelayClient (hashReference 'eth_sendBundle'), signed by our searcher key
    expect(await ok(url, 'eth_sendRawTransaction', [SWAP_C.raw])).toBe(SWAP_C.hash)
    const key = SearcherKey.fromHex(devKey(5))
    const client = new RelayClient({ name: 'local-builder', url, hashReference: 'eth_sendBundle', maxAttempts: 1 }, key)
    const sent = await client.sendBundle({ entries: [{ hash: SWAP_C.hash }, { tx: SWAP_D.raw }], blockNumber: source.latest().block.number + 1n })
    expect(sent.relayBundleHash).toBe(bundleHash([SWAP_C.hash, SWAP_D.hash]))
    expect(builder.bundleStatus(sent.relayBundleHash as Hex)?.signer).toBe(lower(key.address))
    await builder.mineNow()
    // and inclusion as the service reads it
    const checker = new RpcInclusionChecker({ url })
    expect(await checker.receipt(SWAP_C.hash)).toEqual({ transactionHash: SWAP_C.hash, blockNumber: 2n, status: 1 })
    expect(await checker.receipt(SWAP_D.hash)).toMatchObject({ blockNumber: 2n, status: 1 })
    expect(await checker.receipt(REVERTS.hash)).toBeNull()
  })

  it('public transactions go after the bundles, highest tip first; one that reverts still lands', async () => {
    const { builder, url } = await startBuilder()
    await ok(url, 'eth_sendRawTransaction', [TRANSFER.raw])
    await ok(url, 'eth_sendRawTransaction', [REVERTS.raw])
    await ok(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw], blockNumber: '0x1' }])
    const built = await builder.mineNow()
    // REVERTS (legacy, its whole gas price above the base fee is tip) outbids TRANSFER (1559, a
    // smaller priority fee) though it arrived later: public transactions go by tip, not arrival
    const tip = (r: { effectiveGasPrice: bigint }) => r.effectiveGasPrice - (built.block.baseFeePerGas ?? 0n)
    expect(built.receipts.map((r) => [r.transactionHash, r.status, r.transactionIndex])).toEqual([
      [SWAP_B.hash, 1, 0],
      [REVERTS.hash, 0, 1],
      [TRANSFER.hash, 1, 2],
    ])
    expect(tip(built.receipts[1])).toBeGreaterThan(tip(built.receipts[2]))
    expect(built.receipts[2].cumulativeGasUsed).toBe(built.block.gasUsed)
    // already included: refused with a reason
    const again = await rpc(url, 'eth_sendRawTransaction', [TRANSFER.raw])
    expect(again.error?.message).toMatch(/already included in block 1/)
  })

  it('a bundle for a future block waits for it; one for a past block is refused', async () => {
    const { builder, url } = await startBuilder()
    const future = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw], blockNumber: '0x2' }])
    const b1 = await builder.mineNow()
    expect(b1.receipts).toEqual([])
    expect(await ok(url, 'devnet_bundleStatus', [future.bundleHash])).toMatchObject({ status: 'pending' })
    const b2 = await builder.mineNow()
    expect(b2.block.number).toBe(2n)
    expect(b2.receipts.map((r) => r.transactionHash)).toEqual([SWAP_A.hash])
    const past = await rpc(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw], blockNumber: '0x2' }])
    expect(past.error).toMatchObject({ code: -32602, message: expect.stringContaining('not in the future') })
  })

  it('minTimestamp / maxTimestamp: a bundle outside its window is dropped', async () => {
    const { builder, url, source } = await startBuilder()
    const next = source.latest().block.timestamp + 12n
    const late = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw], blockNumber: '0x1', maxTimestamp: Number(next - 1n) }])
    const inWindow = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw], blockNumber: '0x1', minTimestamp: Number(next), maxTimestamp: Number(next) }])
    const built = await builder.mineNow()
    expect(built.bundles).toEqual([inWindow.bundleHash])
    expect(built.dropped).toEqual([{ bundleHash: late.bundleHash, reason: expect.stringContaining('maxTimestamp') }])
  })

  it('replacementUuid replaces a waiting bundle of the same signer; eth_cancelBundle removes it', async () => {
    const { builder, url } = await startBuilder()
    const first = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw], blockNumber: '0x1', replacementUuid: 'u-1' }])
    const second = await ok<{ bundleHash: Hex }>(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw], blockNumber: '0x1', replacementUuid: 'u-1' }])
    expect(builder.pending.bundles).toBe(1)
    expect(builder.bundleStatus(first.bundleHash)).toMatchObject({ status: 'dropped', reason: expect.stringContaining('replaced') })
    await ok(url, 'eth_sendBundle', [{ txs: [SWAP_C.raw], blockNumber: '0x1', replacementUuid: 'u-2' }])
    expect(await ok(url, 'eth_cancelBundle', [{ replacementUuid: 'u-2' }])).toBeNull()
    const built = await builder.mineNow()
    expect(built.bundles).toEqual([second.bundleHash])
  })

  it('bounds: transactions per bundle, pending bundles, request body, batch; clear errors for malformed input', async () => {
    const { url } = await startBuilder({ maxTxsPerBundle: 2, maxPendingBundles: 2, maxBodyBytes: 4096, maxBatchSize: 3 })
    const tooMany = await rpc(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw, SWAP_B.raw, SWAP_C.raw], blockNumber: '0x1' }])
    expect(tooMany.error).toMatchObject({ code: -32602, message: expect.stringContaining('at most 2') })
    await ok(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw], blockNumber: '0x1' }])
    await ok(url, 'eth_sendBundle', [{ txs: [SWAP_B.raw], blockNumber: '0x1' }])
    const full = await rpc(url, 'eth_sendBundle', [{ txs: [SWAP_C.raw], blockNumber: '0x1' }])
    expect(full.error?.code).toBe(-32005)
    // the same bundle again is idempotent, not a new one
    expect((await rpc(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw], blockNumber: '0x1' }])).error).toBeUndefined()

    const big = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendBundle', params: [{ txs: ['0x' + 'ab'.repeat(5000)], blockNumber: '0x1' }] }) })
    expect(big.status).toBe(413)

    const batch = await fetch(url, { method: 'POST', body: JSON.stringify([1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_blockNumber' }))) })
    expect(((await batch.json()) as { error: { code: number } }).error.code).toBe(-32005)
    const okBatch = await fetch(url, { method: 'POST', body: JSON.stringify([1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_blockNumber' }))) })
    expect(await okBatch.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: '0x0' },
      { jsonrpc: '2.0', id: 2, result: '0x0' },
    ])

    expect((await rpc(url, 'eth_sendBundle', [{ txs: ['0x1234'], blockNumber: '0x1' }])).error).toMatchObject({ code: -32602, message: expect.stringContaining('txs[0]') })
    expect((await rpc(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw] }])).error?.message).toMatch(/blockNumber is required/)
    expect((await rpc(url, 'eth_sendBundle', [{ txs: [], blockNumber: '0x1' }])).error?.code).toBe(-32602)
    expect((await rpc(url, 'eth_nope')).error?.code).toBe(-32601)
    const notJson = await fetch(url, { method: 'POST', body: '{' })
    expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700)
    expect((await fetch(url)).status).toBe(405)
  })

  it('keeps producing blocks on its timer, each linked to its parent, and stops when closed', async () => {
    const { source, builder } = await startBuilder({ blockTimeMs: 20 })
    const heads: BlockInfo[] = []
    source.onNewHead((b) => heads.push(b))
    await waitFor(() => heads.length >= 4, 10_000)
    await builder.close()
    const stoppedAt = source.latest().block.number
    for (let i = 1; i < heads.length; i++) {
      expect(heads[i].number).toBe(heads[i - 1].number + 1n)
      expect(heads[i].timestamp).toBe(heads[i - 1].timestamp + 12n)
      expect((heads[i] as BlockInfo & { parentHash: string }).parentHash).toBe(heads[i - 1].hash)
    }
    await new Promise((r) => setTimeout(r, 100))
    expect(source.latest().block.number).toBe(stoppedAt)
  })

  it('does not build empty blocks when told not to, but still builds when something waits', async () => {
    const { source, url } = await startBuilder({ blockTimeMs: 20, mineEmptyBlocks: false })
    await new Promise((r) => setTimeout(r, 150))
    expect(source.latest().block.number).toBe(0n)
    await ok(url, 'eth_sendRawTransaction', [TRANSFER.raw])
    await waitFor(() => source.latest().block.number >= 1n, 10_000)
    expect(await ok(url, 'eth_getTransactionReceipt', [TRANSFER.hash])).toMatchObject({ status: '0x1', blockNumber: '0x1' })
  })
})
