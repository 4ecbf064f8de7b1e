/**
 * npm run bench:flow
 *
 * N users' private swaps per block over M blocks on the embedded devnet (test/support/flow.ts):
 * the service started as `npm start` starts it, its local builder sealing a block every
 * BENCH_BLOCK_TIME_MS, every submission over real HTTP. Reports the share of valid user
 * transactions included, blocks from acknowledgement to inclusion, backruns included versus
 * appended, and realized versus reported backrun profit. Prints one JSON object on its last line.
 *
 * Options (environment): BENCH_USERS (default 20), BENCH_BLOCKS (default 10), BENCH_ARB_SHARE
 * (default 0.5), BENCH_FRAGILE_SHARE (default 0.1), BENCH_BLOCK_TIME_MS (default 2000).
 */
import { runFlow } from '../test/support/flow.ts'

const num = (name: string, fallback: number): number => {
  const v = process.env[name]
  const n = v === undefined || v === '' ? fallback : Number(v)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${v}`)
  return n
}

const report = await runFlow({
  usersPerBlock: num('BENCH_USERS', 20),
  blocks: num('BENCH_BLOCKS', 10),
  arbShare: num('BENCH_ARB_SHARE', 0.5),
  fragileShare: num('BENCH_FRAGILE_SHARE', 0.1),
  blockTimeMs: num('BENCH_BLOCK_TIME_MS', 2_000),
  log: (m) => console.log(m),
})

const kinds = ['arb', 'fragile', 'small'] as const
for (const kind of kinds) {
  const of = report.submissions.filter((s) => s.kind === kind)
  const included = of.filter((s) => s.status?.final?.state === 'included').length
  console.log(`${kind}: ${of.length} submitted, ${included} included`)
}
for (const s of report.submissions) {
  const final = s.status?.final
  if (final?.state !== 'included') console.log(`not included: ${s.kind} ${s.hash} ${final?.state ?? 'pending'} ${final?.reason ?? ''}`)
}
const included = report.backrunsIncluded
console.log(
  JSON.stringify({
    bench: 'flow',
    users_per_block: num('BENCH_USERS', 20),
    blocks: num('BENCH_BLOCKS', 10),
    block_time_ms: num('BENCH_BLOCK_TIME_MS', 2_000),
    submitted: report.submitted,
    included: report.included,
    dropped_invalid: report.droppedInvalid,
    lost: report.lost,
    pending: report.pending,
    included_share: report.validIncludedShare,
    blocks_to_inclusion_p50: report.blocksToInclusion.p50,
    blocks_to_inclusion_p99: report.blocksToInclusion.p99,
    blocks_to_inclusion_max: report.blocksToInclusion.max,
    backruns_appended: report.backrunsAppended,
    backruns_included: included,
    backruns_included_share: report.backrunsAppended === 0 ? 0 : included / report.backrunsAppended,
    realized_equals_reported: report.realizedEqualsReported,
    realized_equals_reported_share: included === 0 ? 1 : report.realizedEqualsReported / included,
    reported_profit_wei: report.reportedProfitWei.toString(),
    realized_profit_wei: report.realizedProfitWei.toString(),
    ack_p50_ms: Number(report.ackP50Ms.toFixed(2)),
    ack_p99_ms: Number(report.ackP99Ms.toFixed(2)),
  }),
)
