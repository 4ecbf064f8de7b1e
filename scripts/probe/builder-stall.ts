/**
 * Probe (issue 13, twelfth session): how long the embedded devnet's local builder holds the event
 * loop while it builds one block of bench:soak's submissions, with and without slices
 * (LOCAL_BUILDER_SLICE_MS). In this process: the devnet, a simulator and a LocalBuilder (no timer);
 * per round, BUILDER_BUNDLES (150: a 12 s block of bench:soak at 50 requests/s, 12.5 submissions/s)
 * bundles of one small swap each (scripts/lib/soak-txs.ts: the devnet's user accounts round-robin,
 * each account's swaps in nonce order), then one mineNow() while a chain of setImmediate counts the
 * event loop's turns and the longest gap between two of them (the longest synchronous stretch, in
 * wall time: inflated by the machine's other load, so compare the two settings within one run).
 * The process's CPU ms per build (process.cpuUsage: this thread, and V8's helper threads) is a
 * count the other load moves less. Rounds alternate the settings in ABBA order, each on a fresh
 * devnet with the same transactions.
 * `BUILDER_ROUNDS=2 nice -n 10 npx tsx scripts/probe/builder-stall.ts` (the slice: BUILDER_SLICE_MS, default 10)
 * Prints one JSON object on its last line.
 */
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { LocalBuilder } from '../../src/devnet/local-builder.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { GENESIS_PATH } from '../../test/support/devnet.ts'
import { smallSwapSigner, userAccounts } from '../lib/soak-txs.ts'

const BUNDLES = Number(process.env.BUILDER_BUNDLES ?? 150)
const ROUNDS = Number(process.env.BUILDER_ROUNDS ?? 2)
const SLICE_MS = Number(process.env.BUILDER_SLICE_MS ?? 10)
/** "one go": a slice longer than any block */
const WHOLE_MS = 600_000

const accounts = userAccounts()
const sign = smallSwapSigner(12)
const genesis = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const baseFee = genesis.latest().block.baseFeePerGas ?? 1_000_000_000n
const raws: `0x${string}`[] = []
for (let i = 0; i < BUNDLES; i++) raws.push(await sign({ account: accounts[i % accounts.length], nonce: Math.floor(i / accounts.length), baseFee }, i))

interface Round {
  sliceMs: number
  buildMs: number
  cpuMs: number
  turns: number
  longestStretchMs: number
  included: number
}

async function round(sliceMs: number): Promise<Round> {
  const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
  const simulator = new Simulator({ common: commonForChain(source.chainId) })
  const builder = new LocalBuilder({ source, simulator, blockTimeMs: 0, sliceMs, maxPendingBundles: BUNDLES + 1 })
  for (const raw of raws) builder.sendBundle({ txs: [{ raw }], blockNumber: 1n })
  let turns = 0
  let longest = 0
  let last = performance.now()
  let ended = false
  const tick = (): void => {
    const t = performance.now()
    longest = Math.max(longest, t - last)
    last = t
    if (ended) return
    turns++
    setImmediate(tick)
  }
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  last = t0
  setImmediate(tick)
  const built = await builder.mineNow()
  const buildMs = performance.now() - t0
  ended = true
  longest = Math.max(longest, performance.now() - last)
  const cpu = process.cpuUsage(cpu0)
  await builder.close()
  return { sliceMs, buildMs, cpuMs: (cpu.user + cpu.system) / 1000, turns, longestStretchMs: longest, included: built.receipts.length }
}

// one warm-up build (the VMs' first code paths), not counted
await round(SLICE_MS)
const rounds: Round[] = []
for (let i = 0; i < ROUNDS; i++) {
  const order = i % 2 === 0 ? [WHOLE_MS, SLICE_MS] : [SLICE_MS, WHOLE_MS]
  for (const s of order) {
    const r = await round(s)
    rounds.push(r)
    console.log(`slice ${s === WHOLE_MS ? 'none' : `${s} ms`}: ${r.included} txs in ${r.buildMs.toFixed(0)} ms, ${r.cpuMs.toFixed(0)} CPU ms, ${r.turns} turns of the event loop, longest stretch ${r.longestStretchMs.toFixed(1)} ms`)
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const of = (s: number) => rounds.filter((r) => r.sliceMs === s)
const summary = (rs: Round[]) => ({
  build_ms: Math.round(mean(rs.map((r) => r.buildMs))),
  cpu_ms: Math.round(mean(rs.map((r) => r.cpuMs))),
  turns: Math.round(mean(rs.map((r) => r.turns))),
  longest_stretch_ms: Math.round(Math.max(...rs.map((r) => r.longestStretchMs)) * 10) / 10,
  included: rs[0].included,
})
console.log(JSON.stringify({ probe: 'builder-stall', bundles: BUNDLES, rounds: ROUNDS, whole: summary(of(WHOLE_MS)), sliced: { slice_ms: SLICE_MS, ...summary(of(SLICE_MS)) } }))
