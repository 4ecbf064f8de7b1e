/**
 * What a new head costs a worker's L1 (issue 13, ninth session): a RemoteStateReader holding N keys
 * (N env, default 5,000), then 38 heads in a row, each announced with an empty block's diff; prints
 * the ms each head's adoption of its parent's entries took (inheritFrom; before 814a46f carryFrom
 * copied every entry: 2-70 ms at 2,000 keys, 80-390 ms at 20,000 on the shared machine).
 * `N=5000 npx tsx scripts/probe/carry-bench.ts`
 */
import { createCodeInterner, RemoteStateReader } from '../../src/workers/remote-state-reader.ts'
import type { BlockInfo } from '../../src/chain/types.ts'
import type { StateRequester } from '../../src/workers/state-requester.ts'
const N = Number(process.env.N ?? 5000)
const block = (n: number): BlockInfo => ({ number: BigInt(n), hash: `0x${n.toString(16).padStart(64, '0')}`, parentHash: `0x${(n - 1).toString(16).padStart(64, '0')}`, timestamp: 0n, gasLimit: 0n, gasUsed: 0n }) as BlockInfo
let reads = 0
const requester = { read: () => { reads++; return Promise.resolve(1n) } } as unknown as StateRequester
const codes = createCodeInterner(1 << 20)
let parent = new RemoteStateReader(block(1), requester, codes)
for (let i = 0; i < N; i++) await parent.getStorage(`0x${(i % 200).toString(16).padStart(40, '0')}` as never, BigInt(i))
const diff = { kind: 'changed', parentHash: block(1).hash, accounts: ['0x' + '1'.repeat(40)], storage: [], clearedStorage: [] } as never
const times: number[] = []
for (let k = 2; k < 40; k++) {
  const child = new RemoteStateReader(block(k), requester, codes)
  const t = performance.now()
  const kept = parent
  child.inheritFrom(parent, diff, (h) => (h === kept.block.hash ? kept : undefined))
  times.push(performance.now() - t)
  parent = child
}
console.log(N, times.map((t) => t.toFixed(2)).join(' '))
