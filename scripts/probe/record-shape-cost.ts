/**
 * node --expose-gc --import tsx scripts/probe/record-shape-cost.ts
 *
 * Probe (issue 10, eighteenth session): what the records the main isolate holds for minutes cost
 * in its heap, per record, as the service builds them: the local builder's bundle records
 * (BundleStatsStore: received, then settled with a few fields), its kept receipts (packReceipt) and
 * decoded transactions (decodeSignedTransaction, whose answers the decode memo keeps). Node 20's V8
 * gives every object made by a spread followed by more properties (`{ ...a, b }`) a hidden class of
 * its own: that shows here as bytes per record, and in `old_space_delta`, since maps and descriptor
 * arrays are allocated straight in old space. PROBE_RECORDS (5000) of each kind are built and held,
 * the heap measured after full collections before and after; run it in two trees to compare them.
 * The last line is one JSON object.
 */
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'
import { privateKeyToAccount } from 'viem/accounts'
import type { Hex } from '../../src/chain/types.ts'
import { BundleStatsStore } from '../../src/devnet/builder/bundle-stats.ts'
import { packReceipt } from '../../src/devnet/builder/kept-receipts.ts'
import { decodeSignedTransaction } from '../../src/tx/decode-transaction.ts'

const RECORDS = Number(process.env.PROBE_RECORDS ?? 5000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const word = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`
const oldSpaceUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0

/** heap bytes held per record by what `build` returns, and old space's share of them */
function perRecord(build: () => unknown): { bytes_per_record: number; old_space_bytes_per_record: number } {
  gc!()
  gc!()
  const before = getHeapStatistics().used_heap_size
  const oldBefore = oldSpaceUsed()
  const held = build()
  gc!()
  gc!()
  const bytes = getHeapStatistics().used_heap_size - before
  const old = oldSpaceUsed() - oldBefore
  if (held === undefined) throw new Error('nothing held')
  return { bytes_per_record: Math.round(bytes / RECORDS), old_space_bytes_per_record: Math.round(old / RECORDS) }
}

// signed first, outside the measured windows: what is measured is the decode's answer only
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
const raws: string[] = []
for (let i = 0; i < RECORDS; i++) {
  raws.push(
    await account.signTransaction({
      chainId: 31337,
      type: 'eip1559',
      nonce: i,
      to: '0x000000000000000000000000000000000000dEaD',
      value: BigInt(i),
      gas: 100_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
      data: '0x1234',
    }),
  )
}

const result = {
  probe: 'record-shape-cost',
  records: RECORDS,
  bundle_stats: perRecord(() => {
    const store = new BundleStatsStore(RECORDS * 2, 1_000)
    for (let n = 0; n < RECORDS; n++) {
      store.received({ bundleHash: word(n), blockNumber: 5n, txHashes: [word(RECORDS + n)], status: 'pending', receivedAt: n, signer: '0x00000000000000000000000000000000000000aa' })
      store.settle(word(n), 5n, 'included', { consideredAt: n + 1, sealedAt: n + 2, includedBlock: 5n })
    }
    return store
  }),
  kept_receipts: perRecord(() =>
    Array.from({ length: RECORDS }, (_, n) =>
      packReceipt({
        transactionHash: word(n),
        transactionIndex: n,
        blockNumber: 5n,
        blockHash: word(1),
        from: '0x00000000000000000000000000000000000000aa',
        to: '0x00000000000000000000000000000000000000bb',
        status: 1,
        gasUsed: 21_000n,
        cumulativeGasUsed: 21_000n * BigInt(n + 1),
        effectiveGasPrice: 10n ** 9n,
        type: 2,
        logs: [{ address: '0x00000000000000000000000000000000000000cc', topics: [word(n)], data: word(2) }],
        contractAddress: null,
        bundleHash: word(n + 7),
      }),
    ),
  ),
  decoded_txs: perRecord(() => raws.map((raw) => decodeSignedTransaction(raw, { chainId: 31337n }))),
}
console.log(JSON.stringify(result))
