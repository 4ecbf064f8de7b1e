/**
 * npm run bench:backrun
 *
 * eth_backrun over the fixture swaps (fixtures/txs, every successful swap, with or without
 * arbitrage), served by the service started as `npm start` starts it (its own process, embedded
 * devnet), warm, over JSON-RPC on loopback; against a baseline searcher in the same run that uses
 * only anvil's RPC (anvil loaded with the same genesis):
 *
 *   evm_snapshot; eth_sendRawTransaction(user tx); for every candidate cycle through a pool the
 *   user moved (same enumeration as ours): the first pool's balance of the start token (one
 *   eth_call) bounds the input; a doubling bracket from 2^-20 of that bound, stopped as soon as a
 *   positive profit stops rising or at the bound (a cycle with no profit by then is skipped); a
 *   ternary search on the input; each step an eth_call of BackrunExecutor.backrun on the
 *   post-swap state; evm_revert. That is the best simple searcher a competent person would write
 *   against anvil's RPC: no call past the optimum, at most ~21 on a cycle that cannot pay.
 *
 * It reports both latencies (p50/p99 per request), the ratio, and compares the profit found per
 * fixture (valued in wei through the pools): ours must be at least as large, to 0.1%.
 *
 * Fork mode: the same requests, round after round for FORK_SECONDS, against the service forking
 * an anvil loaded with the devnet genesis that mines a block every FORK_BLOCK_TIME seconds
 * (`fork_p50_ms`: long enough for many heads, so the figure is the steady state with the chain
 * moving), with the upstream JSON-RPC calls and HTTP requests (round trips) per request and per
 * block over the run, read from the service's /metrics (everything the fork sent, head polls and
 * warm-ups included), and the reads per request that missed the fork's cache.
 * `cpu_percent`: the service process's CPU (all its threads, /proc/<pid>/stat) while it answers
 * the devnet requests, over 100 when more than one core works.
 * `slowest` and `by_fixture` (issue 13's tail): which timed requests make the p99 (see tailMakeup).
 * Prints one JSON object on its last line.
 *
 * Hold-out arbitrage (issue 15): the fixture swaps plus generated swaps through our router (quotes
 * planned by the service itself, split over the pools, several of them through WBTC, UNI and LINK,
 * which are not base tokens); after each, the brute-force reference of scripts/lib/backrun-reference.ts
 * (every cycle of <= 3 pools over all the devnet's pools, each optimized with optimal-input.ts, the
 * profitable ones executed in the EVM) against eth_backrun's answer. `cycles_found_share`: of the
 * swaps after which the reference finds a cycle with a positive net profit, the share where
 * eth_backrun answers that best cycle, or one netting at least as much; `profit_share`: the sum of
 * eth_backrun's net profits over the sum of the reference's best (both in wei, fractions).
 *
 * Options (environment): BENCH_ROUNDS (default 10: requests per fixture for ours), BENCH_FORK
 * (default 1; 0 skips the fork run), FORK_BLOCK_TIME (seconds, default 2), FORK_SECONDS (default 30).
 */
import { readFileSync } from 'node:fs'
import { decodeFunctionData, encodeFunctionData, parseAbi, type Hex } from 'viem'
import { anvilReceipt, anvilRpc, startAnvil } from '../test/support/anvil.ts'
import { forkFigures, runOnDevnetFork } from './lib/devnet-fork.ts'
import { freePort } from '../test/support/net.ts'
import { startServiceProcess } from '../test/support/service-process.ts'
import { startCpuWindow, sumCpuWindows, type CpuWindow } from './lib/process-cpu.ts'
import { summarize } from './lib/stats.ts'
import { encodeBackrunCall } from '../src/backrun/backrun-calldata.ts'
import { enumerateBackrunCycles, toPlanHop } from '../src/backrun/cycle-search.ts'
import { readPoolMoves } from '../src/backrun/pool-moves.ts'
import { bytesToHexString } from '../src/chain/quantity.ts'
import type { Address } from '../src/chain/types.ts'
import { loadConfig } from '../src/node/config.ts'
import { buildPoolGraph, deriveTokenOutPerEth, type PoolSnapshot } from '../src/pools/index.ts'
import { DEV_PARTNER_TOKEN } from '../src/server/jsonrpc/partner-tokens-config.ts'
import { openDomainServices } from '../src/node/domain.ts'
import { decodeSignedTransaction } from '../src/tx/index.ts'
import { bruteForceBackruns, directedCycleKey } from './lib/backrun-reference.ts'
import { ternaryMaximum } from './lib/ternary-search.ts'
import type { PoolRef } from '../src/pools/index.ts'
import { v4PlanKey, v4PoolRef } from '../src/pools/uniswap-v4.ts'
import { executorCanSwap } from '../src/backrun/backrun-engine.ts'
import { encodeSwapPlanCall, SWAP_PLAN_ROUTER_ABI } from '../src/quote/router-calldata.ts'

const BALANCE_OF = parseAbi(['function balanceOf(address) view returns (uint256)'])
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const FORK = process.env.BENCH_FORK !== '0'
const FORK_BLOCK_TIME = Number(process.env.FORK_BLOCK_TIME ?? 2)
const FORK_SECONDS = Number(process.env.FORK_SECONDS ?? 30)
const GENESIS = 'fixtures/devnet/genesis.json'

interface FixtureTx {
  name: string
  raw: Hex
  from: string
  to: string
  value?: string
  createsArbitrage: boolean
  /** the pools it swaps in (the PoolManager for a V4 swap) */
  pools: string[]
  expected: { status: number; balanceChanges: Array<{ address: string; deltas: Record<string, string> }> }
}
const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as {
  chainId: number
  genesisTimestamp: string
  tokens: Array<{ symbol: string; address: string; decimals: number }>
  backrun: { executor: string }
  devAccounts: { accounts: Array<{ address: string }> }
  v2: { pairs: Array<{ address: string; token0: string; token1: string }> }
  v3: { pools: Array<{ address: string; token0: string; token1: string; fee: number }> }
  v4: { pools: Array<{ name: string; currency0: string; currency1: string; fee: number; hooks: string }> }
}
// every successful swap, those in Uniswap V4's PoolManager included
const fixtures = (JSON.parse(readFileSync('fixtures/txs/transactions.json', 'utf8')) as { transactions: FixtureTx[] }).transactions.filter(
  (f) => f.expected.status === 1 && f.name !== 'eth-transfer',
)
const lower = (a: string) => a.toLowerCase() as Address
const token = (symbol: string) => lower(registry.tokens.find((t) => t.symbol === symbol)!.address)
const EXECUTOR = lower(registry.backrun.executor)
const BLOCK_1_TIMESTAMP = Number(registry.genesisTimestamp) + 12

/** what a partner would send for the fixture: tokenIn and amountIn are what its sender spent */
function request(fx: FixtureTx, calldata: Hex) {
  const sender = fx.expected.balanceChanges.find((c) => lower(c.address) === lower(fx.from))!
  const spent = Object.entries(sender.deltas).find(([symbol, delta]) => symbol !== 'ETH' && BigInt(delta) < 0n)
  const value = BigInt(fx.value ?? '0')
  return spent === undefined
    ? { to: lower(fx.to), calldata, value: value.toString(), tokenIn: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', amountIn: value.toString() }
    : { to: lower(fx.to), calldata, value: value.toString(), tokenIn: token(spent[0]), amountIn: (-BigInt(spent[1])).toString() }
}

interface Found {
  profitToken: Address
  grossProfit: bigint
  /** eth_backrun's netProfitEth in wei */
  netWei?: bigint
  /** eth_backrun's directed cycle (backrun-reference.ts directedCycleKey) */
  cycle?: string
}

/** the hold-out's generated swaps: [tokenIn, tokenOut, whole tokens in] through our router, planned by the service's quote */
const GENERATED_SWAPS: Array<[string, string, bigint]> = [
  ['USDC', 'WETH', 250_000n],
  ['USDC', 'WETH', 400_000n],
  ['USDC', 'WETH', 700_000n],
  ['WETH', 'USDC', 50n],
  ['WETH', 'USDC', 100n],
  ['WETH', 'WBTC', 30n],
  ['WETH', 'WBTC', 100n],
  ['WBTC', 'WETH', 2n],
  ['WBTC', 'USDC', 5n],
  ['USDC', 'WBTC', 300_000n],
  ['WETH', 'UNI', 10n],
  ['UNI', 'WETH', 20_000n],
  ['WETH', 'LINK', 10n],
  ['LINK', 'USDC', 20_000n],
  ['WETH', 'DAI', 100n],
  ['USDT', 'WETH', 300_000n],
]
/**
 * Hold-out swaps through one V4 pool each that backruns used to leave out (issue 15): the native
 * ETH/USDC pool and the pools of the two devnet hooks (afterSwap only; beforeSwap fee override),
 * [registry pool name, tokenIn, tokenOut, whole units in], through our router with a one-hop plan
 */
const DIRECT_V4_SWAPS: Array<[string, string, string, bigint]> = [
  ['ETH/USDC 0.3% ts60', 'WETH', 'USDC', 60n],
  ['ETH/USDC 0.3% ts60', 'USDC', 'WETH', 200_000n],
  ['WETH/UNI dynamic 0.05% ts10 swap-counter', 'WETH', 'UNI', 30n],
  ['WETH/LINK dynamic 0.05% ts10 directional-fee', 'WETH', 'LINK', 30n],
  ['WETH/LINK dynamic 0.05% ts10 directional-fee', 'WETH', 'LINK', 90n],
  ['WETH/LINK dynamic 0.05% ts10 directional-fee', 'LINK', 'WETH', 20_000n],
]
const decimalsOf = (symbol: string) => BigInt((registry.tokens as Array<{ symbol: string; decimals?: number }>).find((t) => t.symbol === symbol)?.decimals ?? 18)
const weiOfEth = (eth: string) => {
  const [whole, frac = ''] = eth.replace(/^-/, '').split('.')
  const wei = BigInt(whole) * 10n ** 18n + BigInt((frac + '0'.repeat(18)).slice(0, 18))
  return eth.startsWith('-') ? -wei : wei
}

async function ours(url: string, params: object): Promise<{ ms: number; found: Found | null }> {
  const t = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_backrun', params: [params] }) })
  const body = (await res.json()) as { result?: { profitToken: Address; grossProfit: string; netProfitEth: string; hops: Array<{ pool: string; tokenIn: string }> } | null; error?: unknown }
  const ms = performance.now() - t
  if (body.error !== undefined) throw new Error(`eth_backrun: ${JSON.stringify(body.error)}`)
  const r = body.result
  return { ms, found: r ? { profitToken: r.profitToken, grossProfit: BigInt(r.grossProfit), netWei: weiOfEth(r.netProfitEth), cycle: directedCycleKey(r.hops) } : null }
}

/** the baseline: anvil RPC only; every cycle searched by eth_call on the post-swap state */
async function baseline(anvilUrl: string, fx: FixtureTx, pools: PoolSnapshot[], weth: Address, baseTokens: Address[]): Promise<{ ms: number; calls: number; found: Found | null; valueWei: bigint }> {
  const t = performance.now()
  let calls = 0
  const snapshot = await anvilRpc<string>(anvilUrl, 'evm_snapshot')
  try {
    await anvilRpc(anvilUrl, 'evm_setNextBlockTimestamp', [BLOCK_1_TIMESTAMP])
    const hash = await anvilRpc<string>(anvilUrl, 'eth_sendRawTransaction', [fx.raw])
    const receipt = await anvilReceipt<{ logs: Array<{ address: string; topics: string[]; data: string }> }>(anvilUrl, hash)
    const moved = [...readPoolMoves(receipt.logs.map((l) => ({ address: lower(l.address), topics: l.topics.map((x) => x.toLowerCase() as Hex), data: l.data as Hex }))).keys()]
    const cycles = enumerateBackrunCycles(pools, moved, weth, baseTokens)
    const graph = buildPoolGraph(pools)
    let best: { found: Found; valueWei: bigint } | undefined
    for (const cycle of cycles) {
      const hops = cycle.hops.map(toPlanHop)
      const profit = async (amountIn: bigint): Promise<bigint> => {
        calls++
        const data = encodeBackrunCall({ startToken: cycle.startToken, amountIn, hops, minProfit: 1n, refundBps: 0 })
        try {
          return BigInt(await anvilRpc<Hex>(anvilUrl, 'eth_call', [{ from: lower(fx.from), to: EXECUTOR, data }, 'latest']))
        } catch {
          return 0n
        }
      }
      // bracket: double from a small amount while no profit has shown yet or while it still rises;
      // stop at the first doubling that does not raise a positive profit (the net is concave in the input, so
      // the optimum lies below 2x). Doubling ends at the first pool's balance of the start token:
      // an input larger than the pool's whole reserve moves its price more than 4x, never optimal.
      // A cycle that never shows a profit below that bound is skipped.
      calls++
      // (a V4 pool's tokens are held by its PoolManager)
      const first = cycle.hops[0].pool
      const holder = first.protocol === 'uniswap-v4' ? first.poolManager : first.address
      const cap = BigInt(await anvilRpc<Hex>(anvilUrl, 'eth_call', [{ to: cycle.startToken, data: encodeFunctionData({ abi: BALANCE_OF, functionName: 'balanceOf', args: [holder] }) }, 'latest']))
      let lo = 0n
      // the first input: a millionth of that bound (a smaller one rounds to nothing across decimals)
      let x = cap >> 20n > 0n ? cap >> 20n : 1n
      let px = await profit(x)
      let prev = 0n
      while (x < cap) {
        const next = x * 2n
        const pn = await profit(next)
        if (px > 0n && pn <= px) break
        lo = prev
        prev = x
        x = next
        px = pn
      }
      if (px <= 0n) continue
      // ternary search on the concave profit
      const amount = await ternaryMaximum(profit, lo, x * 2n, 100_000n)
      const p = await profit(amount)
      if (p <= 0n) continue
      const perEth = deriveTokenOutPerEth(graph, weth, cycle.startToken)
      const valueWei = perEth === undefined ? 0n : (p * perEth.den) / perEth.num
      if (best === undefined || valueWei > best.valueWei) best = { found: { profitToken: cycle.startToken, grossProfit: p }, valueWei }
    }
    return { ms: performance.now() - t, calls, found: best?.found ?? null, valueWei: best?.valueWei ?? 0n }
  } finally {
    await anvilRpc(anvilUrl, 'evm_revert', [snapshot])
  }
}

/** The fixtures' requests in turn for FORK_SECONDS in fork mode (see the header), after one warm-up request each as in the devnet run. */
function forkRun(requests: object[]) {
  return runOnDevnetFork({
    blockTimeSeconds: FORK_BLOCK_TIME,
    seconds: FORK_SECONDS,
    warmUp: requests.length,
    send: async (base, fork, i) => (await ours(`${base}/rpc/${fork.partnerToken}/backrun`, requests[i % requests.length])).ms,
  })
}

async function main() {
  const port = await freePort()
  // LOCAL_BUILDER_PORT 0: the local builder takes a free port, so benchmarks and tests can run at once
  const service = await startServiceProcess(port, { LOCAL_BUILDER_PORT: '0' })
  const anvil = await startAnvil({ genesisPath: GENESIS })
  // the baseline's knowledge of the pools (a real searcher indexes them): the devnet's, pre-swap
  const local = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent' }), { log: { warn: () => {} } })
  try {
    const url = `http://127.0.0.1:${port}/rpc/${DEV_PARTNER_TOKEN}/backrun`
    const weth = local.contracts.weth
    const baseTokens = [...local.contracts.baseTokens]
    const poolMap = new Map<Address, PoolSnapshot>()
    for (const a of registry.tokens) for (const b of registry.tokens) {
      if (a.address >= b.address) continue
      for (const p of (await local.routing.loadPools(local.chain.latest(), lower(a.address), lower(b.address))).pools) poolMap.set(p.address, p)
    }
    // the pools the engine searches (every pool whose tokens are ERC-20s: native-ETH V4 keys as WETH pools, hooked ones too)
    const pools = [...poolMap.values()].filter(executorCanSwap)

    const oursSamples: number[] = []
    // each timed request with its fixture, round and found cycle: the tail's makeup (`slowest`, `by_fixture`)
    const timed: Array<{ fixture: string; round: number; ms: number; found: boolean; at: number }> = []
    const benchStart = performance.now()
    const baseSamples: number[] = []
    const rows = []
    const requests: object[] = []
    let worse = 0
    let totalCalls = 0
    // the service's CPU while it answers our requests (not while the baseline runs against anvil)
    const cpuWindows: CpuWindow[] = []
    for (const fx of fixtures) {
      const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: local.simulator.common })
      const params = request(fx, bytesToHexString(tx.tx.data))
      requests.push(params)
      await ours(url, params) // warm-up
      let mine: Found | null = null
      const window = startCpuWindow(service.pid!)
      for (let i = 0; i < ROUNDS; i++) {
        const at = performance.now() - benchStart
        const r = await ours(url, params)
        oursSamples.push(r.ms)
        timed.push({ fixture: fx.name, round: i, ms: r.ms, found: r.found !== null, at })
        mine = r.found
      }
      cpuWindows.push(window.stop())
      const base = await baseline(anvil.url, fx, pools, weth, baseTokens)
      baseSamples.push(base.ms)
      totalCalls += base.calls
      const graph = buildPoolGraph(pools)
      const perEth = mine === null ? undefined : deriveTokenOutPerEth(graph, weth, mine.profitToken)
      const mineWei = mine === null || perEth === undefined ? 0n : (mine.grossProfit * perEth.den) / perEth.num
      if (mineWei * 1000n < base.valueWei * 999n) worse++
      rows.push({ fixture: fx.name, arb: fx.createsArbitrage, ours_wei: mineWei.toString(), baseline_wei: base.valueWei.toString(), baseline_ms: Math.round(base.ms), baseline_calls: base.calls })
    }
    console.table(rows)
    const o = summarize(oursSamples)
    const b = summarize(baseSamples)
    const cpu = sumCpuWindows(cpuWindows)
    console.log(`ours p50 ${o.p50.toFixed(2)} ms p99 ${o.p99.toFixed(2)} ms | baseline p50 ${b.p50.toFixed(1)} ms p99 ${b.p99.toFixed(1)} ms | fixtures where ours found less: ${worse}`)
    const holdOut = await holdOutShares(url, local, requests)
    console.table(holdOut.rows)
    console.log(`hold-out: ${holdOut.withArbitrage} swaps with a cycle of positive net profit (reference), ours found ${holdOut.found}; profit share ${holdOut.profitShare.toFixed(6)}`)
    const forkRunResult = FORK ? await forkRun(requests) : undefined
    const fork = forkRunResult === undefined ? undefined : { summary: summarize(forkRunResult.samples), figures: forkFigures(forkRunResult, FORK_BLOCK_TIME, 'request') }
    if (fork !== undefined) console.log(`fork        ours p50 ${fork.summary.p50.toFixed(2)} ms p99 ${fork.summary.p99.toFixed(2)} ms ${JSON.stringify(fork.figures)}`)
    console.log(
      JSON.stringify({
        name: 'bench:backrun',
        p50_ms: round(o.p50),
        p99_ms: round(o.p99),
        peer: { name: 'anvil-RPC searcher (snapshot, user tx; per cycle: doubling bracket from 2^-20 of the first pool balance, stopped when a positive profit stops rising or at that balance, no-profit cycles skipped, ternary search; eth_call per step)', p50_ms: round(b.p50), p99_ms: round(b.p99) },
        ratio_p50: round(b.p50 / o.p50),
        cpu_percent: round(cpu.cpuPercent),
        ...(fork === undefined
          ? {}
          : {
              fork_p50_ms: round(fork.summary.p50),
              fork_p99_ms: round(fork.summary.p99),
              fork: fork.figures,
            }),
        fixtures: fixtures.length,
        requests: oursSamples.length,
        profit_below_baseline: worse,
        baseline_calls_total: totalCalls,
        cycles_found_share: round6(holdOut.withArbitrage === 0 ? 1 : holdOut.found / holdOut.withArbitrage),
        profit_share: round6(holdOut.profitShare),
        holdout_swaps: holdOut.rows.length,
        holdout_with_arbitrage: holdOut.withArbitrage,
        holdout_p50_ms: round(holdOut.latency.p50),
        holdout_p99_ms: round(holdOut.latency.p99),
        ...tailMakeup(timed),
      }),
    )
  } finally {
    service.kill('SIGKILL')
    await anvil.stop()
    await local.close()
  }
}

const round = (x: number) => Math.round(x * 100) / 100

/**
 * What bench:backrun's tail is made of: the SLOWEST_SHOWN slowest timed requests (fixture, round of
 * its 10, whether a backrun was found, ms since the bench's first timed request: the devnet seals
 * every 12 s, so requests 12 s apart may straddle a head) and per fixture p50 / max with a found
 * flag, slowest first.
 */
function tailMakeup(timed: ReadonlyArray<{ fixture: string; round: number; ms: number; found: boolean; at: number }>) {
  const slowest = [...timed].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN).map((t) => ({ fixture: t.fixture, round: t.round, found: t.found, ms: round(t.ms), at_ms: Math.round(t.at) }))
  const byFixture = new Map<string, { ms: number[]; found: boolean }>()
  for (const t of timed) {
    const f = byFixture.get(t.fixture) ?? { ms: [], found: false }
    f.ms.push(t.ms)
    f.found ||= t.found
    byFixture.set(t.fixture, f)
  }
  const by_fixture = [...byFixture]
    .map(([fixture, f]) => ({ fixture, found: f.found, p50_ms: round(summarize(f.ms).p50), max_ms: round(Math.max(...f.ms)) }))
    .sort((a, b) => b.max_ms - a.max_ms)
  return { slowest, by_fixture }
}
const SLOWEST_SHOWN = 6
const round6 = (x: number) => Math.round(x * 1e6) / 1e6

/**
 * The hold-out (see the header): the fixtures' requests and the generated swaps, each answered by
 * the service (a warm-up, then BENCH_ROUNDS timed requests for the generated ones) and searched by
 * the brute-force reference in this process.
 */
async function holdOutShares(url: string, local: Awaited<ReturnType<typeof openDomainServices>>, fixtureRequests: object[]) {
  const user = lower(registry.devAccounts.accounts[3].address)
  const generated: Array<{ name: string; params: Record<string, string> }> = []
  for (const [a, b, whole] of GENERATED_SWAPS) {
    const amountIn = whole * 10n ** decimalsOf(a)
    const q = await local.quote.quote({ tokenIn: token(a), tokenOut: token(b), amountIn, sender: user })
    // the quote's deadline is 300 s after this process's genesis head; the service's devnet builder
    // seals a block every 12 s, so the swap gets the fixtures' far deadline (2^32 - 1) instead
    const swap = decodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, data: q.calldata })
    const args = [...(swap.args as readonly unknown[])]
    args[3] = 2n ** 32n - 1n
    const calldata = encodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, functionName: 'swap', args: args as never })
    generated.push({ name: `quote ${whole} ${a} -> ${b}`, params: { to: q.router, calldata, value: '0', tokenIn: token(a), amountIn: amountIn.toString() } })
  }
  const v4Venue = local.routing.discovery.venues.find((v) => v.protocol === 'uniswap-v4')
  for (const [name, a, b, whole] of DIRECT_V4_SWAPS) {
    const entry = registry.v4.pools.find((p) => p.name === name)
    const key = v4Venue?.protocol === 'uniswap-v4' ? v4Venue.pools.find((k) => entry !== undefined && lower(k.currency0) === lower(entry.currency0) && lower(k.currency1) === lower(entry.currency1) && k.fee === entry.fee && lower(k.hooks) === lower(entry.hooks)) : undefined
    if (v4Venue?.protocol !== 'uniswap-v4' || key === undefined) throw new Error(`the V4 venue lists no pool ${name}`)
    const ref = v4PoolRef(v4Venue.poolManager, key, v4Venue.name, local.contracts.weth)
    const amountIn = whole * 10n ** decimalsOf(a)
    const hop = { protocol: 'uniswap-v4' as const, pool: ref.address, tokenIn: token(a), tokenOut: token(b), fee: ref.fee, zeroForOne: token(a) === ref.token0, v4: v4PlanKey(ref) }
    const plan = { tokenIn: token(a), tokenOut: token(b), amountIn, legs: [{ amountIn, hops: [hop], expectedAmountOut: 0n }], expectedAmountOut: 0n }
    const calldata = encodeSwapPlanCall({ plan, minAmountOut: 1n, recipient: user, deadline: 2n ** 32n - 1n })
    generated.push({ name: `V4 ${whole} ${a} -> ${b} in ${name}`, params: { to: local.contracts.router, calldata, value: '0', tokenIn: token(a), amountIn: amountIn.toString() } })
  }
  const all = [...fixtures.map((fx, i) => ({ name: fx.name, params: fixtureRequests[i] as Record<string, string> })), ...generated]
  // every pool of every devnet venue (Uniswap's in registry.v2/v3, the added ones in registry.venues, V4's keys)
  const added = (registry as unknown as { venues: Array<{ name: string; kind: 'v2' | 'v3'; feeBps?: number; pairs?: Array<{ address: string; token0: string; token1: string }>; pools?: Array<{ address: string; token0: string; token1: string; fee: number }> }> }).venues
  const refs: PoolRef[] = [
    ...registry.v2.pairs.map((p) => ({ protocol: 'uniswap-v2' as const, address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: 3000, venue: 'uniswap-v2' })),
    ...registry.v3.pools.map((p) => ({ protocol: 'uniswap-v3' as const, address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: p.fee, venue: 'uniswap-v3' })),
    ...added.flatMap((v) => (v.pairs ?? []).map((p) => ({ protocol: 'uniswap-v2' as const, address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: (v.feeBps ?? 30) * 100, venue: v.name }))),
    ...added.flatMap((v) => (v.pools ?? []).map((p) => ({ protocol: 'uniswap-v3' as const, address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: p.fee, venue: v.name }))),
    // the V4 venue's pools by PoolId: every key BackrunExecutor can swap in (native ETH as WETH, hooked ones too)
    ...local.routing.discovery.venues.flatMap((v) => (v.protocol === 'uniswap-v4' ? v.pools.map((k) => v4PoolRef(v.poolManager, k, v.name, local.contracts.weth)) : [])).filter(executorCanSwap),
  ]
  const priorityFeeWei = loadConfig({ LOG_LEVEL: 'silent' }).backrun.priorityFeeWei
  const samples: number[] = []
  const rows = []
  let withArbitrage = 0
  let found = 0
  let ourNet = 0n
  let bestNet = 0n
  for (const [i, c] of all.entries()) {
    let mine = (await ours(url, c.params)).found
    if (i >= fixtures.length) {
      for (let r = 0; r < ROUNDS; r++) {
        const o = await ours(url, c.params)
        samples.push(o.ms)
        mine = o.found
      }
    }
    const request = { to: lower(c.params.to), calldata: c.params.calldata as Hex, value: BigInt(c.params.value), tokenIn: lower(c.params.tokenIn), amountIn: BigInt(c.params.amountIn) }
    const ref = await bruteForceBackruns(local, request, refs, EXECUTOR, priorityFeeWei)
    const top = ref.positive[0]
    const mineNet = mine?.netWei ?? 0n
    const hit = top !== undefined && mine !== null && (mine.cycle === top.key || mineNet >= top.netWei)
    if (top !== undefined) {
      withArbitrage++
      if (hit) found++
      bestNet += top.netWei
      ourNet += mineNet > 0n ? mineNet : 0n
    }
    rows.push({ swap: c.name, reference_cycles: ref.cycles, reference_positive: ref.positive.length, reference_best_net_wei: top?.netWei.toString() ?? '-', ours_net_wei: mine === null ? 'null' : mineNet.toString(), same_cycle: top === undefined ? '-' : mine?.cycle === top.key, found: top === undefined ? '-' : hit })
  }
  return { rows, withArbitrage, found, profitShare: bestNet === 0n ? 1 : Number((ourNet * 1_000_000n) / bestNet) / 1e6, latency: summarize(samples.length > 0 ? samples : [0]) }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
