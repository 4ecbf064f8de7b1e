/**
 * bench:soak's memory per pending submission, measured in THIS process (needs `node --expose-gc`):
 * the real submission pipeline wired as src/node/submission.ts wires it (domain services of
 * src/node/domain.ts on the embedded devnet, an OutboxStore in a temp dir, a Dispatcher with the real
 * engine simulator and EngineBackrunPlanner signing with the devnet searcher keys, a RelayClient to
 * a recording HTTP relay that accepts everything and never includes, an inclusion checker that
 * always answers pending). Differences from the service: heads come from this module (one head is
 * fed by hand) and there is no HTTP server in front of accept (each raw tx goes through
 * decodeSignedTransaction as the RPC handler does, then Dispatcher.accept).
 *
 * 1. warm-up: a throw-away dispatcher and store take `warmup` submissions through one head, so
 *    one-time costs (JIT, VM pool, pool-state and token caches of that block) are not counted;
 * 2. the measured dispatcher is started with no head; gc(), heapUsed = before;
 * 3. accept `count` distinct signed small swaps (nonce 0, distinct senders and amounts, so every
 *    one simulates successfully on the head), feed one head, wait until idle: every submission has
 *    been simulated, backrun-planned and sent once and now waits for the next head;
 * 4. gc(), heapUsed = after; (after - before) / count.
 * The signed txs wait in Buffers (off the V8 heap) until each is accepted, as fresh strings, the
 * way an HTTP body would bring them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { loadConfig } from '../../src/node/config.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { DEV_PARTNER_ID } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { Dispatcher, OutboxStore, RelayClient, SearcherKey, type HeadInfo, type HeadSource } from '../../src/submission/index.ts'
import { EngineBackrunPlanner, privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { engineSubmissionSimulator } from '../../src/submission/engine-simulator.ts'
import { SearcherKeyPool } from '../../src/submission/searcher-key-pool.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { recordingRelay } from './recording-relay.ts'
import { searcherPrivateKeys, smallSwapSigner, userAccounts } from './soak-txs.ts'

export interface PendingMemoryResult {
  count: number
  /** heap per entry of the decoded-transaction memo, which is part of bytesPerPending (bounded at 4,096 entries) */
  decodeMemoBytesPerEntry: number
  bytesPerPending: number
  rawTxBytes: number
  heapBeforeMb: number
  heapAfterMb: number
  externalDeltaBytesPerPending: number
  active: number
  relayBundles: number
  relayBundlesWithBackrun: number
  acceptMs: number
  prepareMs: number
}

function manualHeads(): HeadSource & { emit(head: HeadInfo): void } {
  const listeners = new Set<(head: HeadInfo) => void>()
  return {
    onNewHead(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    emit(head) {
      for (const l of listeners) l(head)
    },
  }
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined }

function gcHeap(): { heapUsed: number; external: number } {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('global gc() is not exposed: run with node --expose-gc')
  for (let i = 0; i < 4; i++) gc()
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, external: m.external }
}

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      await fn(items[i], i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

export async function measurePendingSubmissionMemory(count: number, warmup: number, log: (line: string) => void): Promise<PendingMemoryResult> {
  if ((globalThis as { gc?: unknown }).gc === undefined) throw new Error('global gc() is not exposed: run with node --expose-gc')
  const root = mkdtempSync(join(tmpdir(), 'bench-soak-pending-'))
  let services: DomainServices | undefined
  let relay: Awaited<ReturnType<typeof recordingRelay>> | undefined
  const cleanups: Array<() => Promise<void>> = []
  try {
    const config = loadConfig({ DATA_DIR: join(root, 'outbox'), LOG_LEVEL: 'warn' })
    services = await openDomainServices(config, { log: quiet })
    const { chain, simulator, backrun } = services
    relay = await recordingRelay()
    const keys = searcherPrivateKeys()
    const relayKey = SearcherKey.fromHex(keys[0])
    const signerPool = new SearcherKeyPool(keys.map((k) => privateKeyBackrunSigner(k)))
    const decode = { chainId: chain.chainId, common: simulator.common }
    const head = chain.latest().block
    const baseFee = head.baseFeePerGas ?? 1_000_000_000n

    const makeDispatcher = (store: OutboxStore, heads: HeadSource) =>
      new Dispatcher({
        store,
        relays: [new RelayClient({ name: 'recorder', url: relay!.url }, relayKey)],
        heads,
        inclusion: { check: async () => ({ status: 'pending' as const }) },
        planner: new EngineBackrunPlanner({ chain, simulator, engine: backrun, signer: signerPool, refundBps: config.backrun.refundBps, maxPriorityFeePerGas: config.backrun.priorityFeeWei }),
        simulate: engineSubmissionSimulator({ chain, simulator }),
        decode,
        expiryBlocks: config.submission.expiryBlocks,
        log: quiet,
      })

    // distinct signed swaps, nonce 0, senders rotating over the user accounts
    const accounts = userAccounts()
    const sign = smallSwapSigner(7_000)
    const signAll = async (n: number, offset: number): Promise<Buffer[]> => {
      const out: Buffer[] = []
      for (let k = 0; k < n; k++) {
        const i = offset + k
        const raw = await sign({ account: accounts[i % accounts.length], nonce: 0, baseFee }, i + 1)
        out.push(Buffer.from(raw.slice(2), 'hex'))
      }
      return out
    }
    const accept = async (dispatcher: Dispatcher, buf: Buffer) => {
      const tx = decodeSignedTransaction(`0x${buf.toString('hex')}` as Hex, decode)
      await dispatcher.accept({ kind: 'private-tx', partnerId: DEV_PARTNER_ID, rawTx: tx.rawHex })
    }

    // 1. warm-up with a throw-away dispatcher and store
    log(`pending: warm-up with ${warmup} submissions...`)
    const warmTxs = await signAll(warmup, 1_000_000)
    const warmStore = new OutboxStore(join(root, 'warm'), { maxOpen: config.submission.maxPendingSubmissions })
    await warmStore.open()
    const warmHeads = manualHeads()
    const warm = makeDispatcher(warmStore, warmHeads)
    await warm.start()
    await pool(warmTxs, 16, (buf) => accept(warm, buf))
    warmHeads.emit(head)
    await warm.whenIdle()
    await warm.stop()
    await warmStore.close()

    // 2. the measured dispatcher, started with no head
    log(`pending: signing ${count} submissions...`)
    const txs = await signAll(count, 0)
    const rawTxBytes = txs.reduce((a, b) => a + b.length, 0) / txs.length
    const store = new OutboxStore(join(root, 'outbox'), { maxOpen: config.submission.maxPendingSubmissions })
    await store.open()
    cleanups.push(() => store.close())
    const heads = manualHeads()
    const dispatcher = makeDispatcher(store, heads)
    await dispatcher.start()
    cleanups.unshift(() => dispatcher.stop())
    const relayBefore = relay.received()
    const relayBackrunBefore = relay.withBackrun()
    const before = gcHeap()

    // 3. accept, one head, idle
    const t0 = performance.now()
    await pool(txs, 32, (buf) => accept(dispatcher, buf))
    const t1 = performance.now()
    heads.emit(head)
    await dispatcher.whenIdle()
    const t2 = performance.now()
    const stats = dispatcher.stats()

    // 4. after
    const after = gcHeap()
    // the share of the decoded-transaction memo (src/tx/decode-transaction.ts, 4,096 entries per
    // Common): the same txs decoded once more under a fresh Common fill a second memo of their own
    const freshCommon = commonForChain(chain.chainId, config.chain.hardfork)
    for (const buf of txs) decodeSignedTransaction(`0x${buf.toString('hex')}` as Hex, { chainId: chain.chainId, common: freshCommon })
    const afterMemo = gcHeap()
    const memoEntries = Math.min(txs.length, 4_096)

    const result: PendingMemoryResult = {
      decodeMemoBytesPerEntry: Math.round((afterMemo.heapUsed - after.heapUsed) / memoEntries),
      count,
      bytesPerPending: Math.round((after.heapUsed - before.heapUsed) / count),
      rawTxBytes: Math.round(rawTxBytes * 10) / 10,
      heapBeforeMb: Math.round((before.heapUsed / 1048576) * 10) / 10,
      heapAfterMb: Math.round((after.heapUsed / 1048576) * 10) / 10,
      externalDeltaBytesPerPending: Math.round((after.external - before.external) / count),
      active: stats.active,
      relayBundles: relay.received() - relayBefore,
      relayBundlesWithBackrun: relay.withBackrun() - relayBackrunBefore,
      acceptMs: Math.round(t1 - t0),
      prepareMs: Math.round(t2 - t1),
    }
    return result
  } finally {
    for (const c of cleanups) await c().catch(() => undefined)
    await services?.close().catch(() => undefined)
    relay?.server.closeAllConnections()
    relay?.server.close()
    rmSync(root, { recursive: true, force: true })
  }
}
