/**
 * Probe (issue 10, twentieth session): what the embedded devnet's state readers hold as blocks pass
 * under bench:soak's private flow, without the rest of the service. The devnet source and its local
 * builder in this process; each block gets SWAPS signed small swaps (scripts/lib/soak-txs.ts, the
 * soak's own, from the devnet's user accounts, each with its own nonce counter) as public
 * transactions, then is built (mineNow). As the service does, the readers of the last PINNED heads
 * are kept (the workers' StateHost, MAX_PINNED_BLOCKS) and each head's stateDiff() is asked (the
 * workers' head announcement).
 *
 * Printed every REPORT blocks, after full GCs: the heap used, the keys the head reader's layers hold
 * (accounts, code, slots; the merged layer is every change since the genesis), the distinct layer
 * objects and the distinct keys over every kept reader (what the copies add over one). The slope of
 * the heap over the blocks says what each block adds that stays; the keys say whether that is the
 * chain's own new state (new keys) or copies of the same keys.
 *
 *   node --expose-gc --import tsx scripts/probe/devnet-reader-memory.ts
 *   env: BLOCKS (160), SWAPS per block (40), PINNED (16), REPORT (16), DEVNET_STATE_LAYER_DEPTH (8),
 *        LOCAL_BUILDER_HISTORY_BLOCKS (8)
 */
import { writeHeapSnapshot } from 'node:v8'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { LayeredStateReader, type StateChanges } from '../../src/chain/memory/layered-state-reader.ts'
import type { StateReader } from '../../src/chain/types.ts'
import { LocalBuilder } from '../../src/devnet/local-builder.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { GENESIS_PATH } from '../../test/support/devnet.ts'
import { smallSwapSigner, userAccounts } from '../lib/soak-txs.ts'

const int = (name: string, fallback: number): number => {
  const v = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer`)
  return v
}
const BLOCKS = int('BLOCKS', 160)
const SWAPS = int('SWAPS', 40)
const PINNED = int('PINNED', 16)
const REPORT = int('REPORT', 16)
const DEPTH = int('DEVNET_STATE_LAYER_DEPTH', 8)
const HISTORY = int('LOCAL_BUILDER_HISTORY_BLOCKS', 8)
/** SNAPSHOT_AT=<block>,<block>: heap snapshots after those blocks, in SNAPSHOT_DIR (.) (for scripts/probe/heap-snapshot-diff.ts) */
const SNAPSHOT_AT = new Set((process.env.SNAPSHOT_AT ?? '').split(',').filter((x) => x !== '').map(Number))

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')
const heapMb = (): number => {
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage().heapUsed / 1_048_576
}

/** the layers of a reader (a private field: a probe may look) */
const layersOf = (reader: StateReader): readonly StateChanges[] => (reader instanceof LayeredStateReader ? (reader as unknown as { layers: readonly StateChanges[] }).layers : [])
const keysOf = (layer: StateChanges): number => {
  let n = layer.accounts.size + layer.code.size + layer.cleared.size
  for (const slots of layer.storage.values()) n += slots.size
  return n
}

const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH, { maxLayerDepth: DEPTH })
const simulator = new Simulator({ common: commonForChain(source.chainId) })
const builder = new LocalBuilder({ source, simulator, blockTimeMs: 0, historyBlocks: HISTORY, bundleStatsBlocks: HISTORY, mineEmptyBlocks: true, onError: (e) => console.error(e) })
const pinned: StateReader[] = []
source.onNewHead(() => {
  const head = source.latest()
  head.stateDiff?.()
  pinned.push(head)
  if (pinned.length > PINNED) pinned.shift()
})

const accounts = userAccounts()
const nonces = new Map<string, number>(accounts.map((a) => [a.address, 0]))
const sign = smallSwapSigner(3)
const rows: Array<{ block: number; heapMb: number }> = []
let signed = 0
console.log(`devnet readers: ${BLOCKS} blocks of ${SWAPS} swaps from ${accounts.length} accounts, layer depth ${DEPTH}, builder history ${HISTORY}, ${PINNED} heads pinned`)
for (let b = 1; b <= BLOCKS; b++) {
  const baseFee = source.latest().block.baseFeePerGas ?? 1_000_000_000n
  for (let s = 0; s < SWAPS; s++) {
    const account = accounts[signed % accounts.length]
    const nonce = nonces.get(account.address) ?? 0
    nonces.set(account.address, nonce + 1)
    await builder.sendRawTransaction(await sign({ account, nonce, baseFee }, ++signed))
  }
  const built = await builder.mineNow()
  if (built.receipts.length !== SWAPS) console.log(`block ${b}: ${built.receipts.length} of ${SWAPS} included`)
  // a line to count --trace-opt's compilations by, without the report's full GCs
  if (b % 16 === 0) console.log(`mark ${b}`)
  if (SNAPSHOT_AT.has(b)) {
    heapMb()
    console.log(`block ${b}: heap snapshot ${writeHeapSnapshot(`${process.env.SNAPSHOT_DIR ?? '.'}/devnet-readers-${b}.heapsnapshot`)}`)
  }
  if (b % REPORT === 0) {
    const head = source.latest()
    const mb = heapMb()
    rows.push({ block: b, heapMb: mb })
    const layers = new Set<StateChanges>()
    for (const r of [...pinned, head]) for (const l of layersOf(r)) layers.add(l)
    let layerKeys = 0
    for (const l of layers) layerKeys += keysOf(l)
    const headKeys = layersOf(head).reduce((n, l) => n + keysOf(l), 0)
    const merged = layersOf(head).at(-1)
    console.log(
      `block ${b}: heap ${mb.toFixed(2)} MB; head depth ${layersOf(head).length}, its layers' keys ${headKeys} (oldest layer: ${merged === undefined ? 0 : keysOf(merged)} keys, ${merged?.accounts.size ?? 0} accounts, ${merged?.storage.size ?? 0} storage accounts); distinct layers held ${layers.size}, their keys ${layerKeys}`,
    )
  }
}
const from = rows.find((r) => r.block >= BLOCKS / 4) ?? rows[0]
const last = rows[rows.length - 1]
console.log(JSON.stringify({ probe: 'devnet-reader-memory', blocks: BLOCKS, swaps_per_block: SWAPS, layer_depth: DEPTH, history: HISTORY, pinned: PINNED, heap_mb: rows.map((r) => [r.block, Math.round(r.heapMb * 100) / 100]), kb_per_block_after_first_quarter: Math.round(((last.heapMb - from.heapMb) * 1024 * 100) / Math.max(1, last.block - from.block)) / 100 }))
await builder.close()
