/**
 * What the router's calldata costs a quote beside its execution (issue 12, sixteenth session):
 * the plans the route search gives for the bench:quote mix (in process, `WORKERS=0`, on the
 * embedded devnet), each encoded as the quote service does before every router execution: the
 * bytes the EVM runs and the hex the answer carries. `PROBE_ROOT` (default this tree) names the
 * tree whose encoder is loaded, so a copy of an older tree can be measured beside this one: a tree
 * without `encodeSwapPlanCallBytes` encodes hex, and the simulator parsed it back to bytes
 * (`hexToBytesStrict`), as the quote service did then. `PROBE_ROUNDS` (6) rounds of `PROBE_PASSES`
 * (2,000) passes over the plans; per round CPU us per encoding (process.cpuUsage); last line one
 * JSON object with each round's figure, the minimum and the median.
 *   npx tsx scripts/probe/calldata-cost.ts
 *   PROBE_ROOT=/tmp/s16-base/base npx tsx scripts/probe/calldata-cost.ts
 */
import { resolve } from 'node:path'
import type { Hex } from '../../src/chain/types.ts'
import type { SwapPlan } from '../../src/routing/swap-plan.ts'

const ROOT = resolve(process.env.PROBE_ROOT ?? '.')
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 6)
const PASSES = Number(process.env.PROBE_PASSES ?? 2_000)

type CallParams = Parameters<typeof import('../../src/quote/router-calldata.ts').encodeSwapPlanCall>[0]
const { loadConfig } = (await import(`${ROOT}/src/node/config.ts`)) as typeof import('../../src/node/config.ts')
const { openDomainServices } = (await import(`${ROOT}/src/node/domain.ts`)) as typeof import('../../src/node/domain.ts')
const { QUOTE_MIX } = (await import(`${ROOT}/test/support/quote-mix.ts`)) as typeof import('../../test/support/quote-mix.ts')
const calldata = (await import(`${ROOT}/src/quote/router-calldata.ts`)) as { encodeSwapPlanCall(p: CallParams): Hex; encodeSwapPlanCallBytes?: (p: CallParams) => Uint8Array }
const { bytesToHexString, hexToBytesStrict } = (await import(`${ROOT}/src/chain/quantity.ts`)) as typeof import('../../src/chain/quantity.ts')

const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0' }), { log: { warn: () => {} } })
const reader = domain.chain.latest()
const plans: SwapPlan[] = []
for (const q of QUOTE_MIX) {
  const outcome = await domain.routing.route(reader, { tokenIn: q.tokenIn, tokenOut: q.tokenOut, amountIn: q.amountIn, gasPriceWei: reader.block.baseFeePerGas ?? 0n })
  if (outcome.kind === 'plan') plans.push(outcome.plan)
}
await domain.close()

const bytesEncoder = calldata.encodeSwapPlanCallBytes
/** what the quote service hands the EVM and keeps for the answer, as this tree does it */
const encode: (p: CallParams) => { data: Uint8Array; hex: Hex } =
  bytesEncoder === undefined
    ? (p) => {
        const hex = calldata.encodeSwapPlanCall(p)
        return { data: hexToBytesStrict(hex, 'data'), hex }
      }
    : (p) => {
        const data = bytesEncoder(p)
        return { data, hex: bytesToHexString(data) }
      }

let checksum = 0
const pass = (n: number) => {
  for (const plan of plans) checksum += encode({ plan, minAmountOut: (plan.expectedAmountOut * 9_950n) / 10_000n + BigInt(n), deadline: 1_800_000_000n }).data.length
}
for (let n = 0; n < PASSES; n++) pass(n)
const rounds: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  const from = process.cpuUsage()
  for (let n = 0; n < PASSES; n++) pass(n)
  const d = process.cpuUsage(from)
  rounds.push(Math.round((100 * (d.user + d.system)) / (PASSES * plans.length)) / 100)
  console.log(`round ${r}: ${rounds[r]} CPU us per encoding`)
}
const sorted = [...rounds].sort((a, b) => a - b)
console.log(
  JSON.stringify({
    name: 'probe:calldata-cost',
    root: ROOT,
    encoder: bytesEncoder === undefined ? 'hex, parsed back' : 'bytes, hex beside',
    plans: plans.length,
    legs: plans.map((p) => p.legs.length),
    calldata_bytes: plans.map((p) => encode({ plan: p, minAmountOut: 0n, deadline: 0n }).data.length),
    us_per_encoding: rounds,
    min: sorted[0],
    median: sorted[Math.floor(sorted.length / 2)],
    checksum,
  }),
)
process.exit(0)
