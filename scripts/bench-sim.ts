/**
 * npm run bench:sim
 *
 * Warm V2 and V3 swap simulation in-process against anvil's eth_call of the same swap on the same
 * state (the devnet genesis), in the same run; gas of both against anvil's receipt; cold and warm
 * figures of a fork of anvil; and the resident memory of the process holding the devnet plus a fork
 * cache filled to its default bounds: 250,000 state entries and 64 MiB of contract code. Prints one JSON object on its last line.
 *
 * In-process peers, where they load: EDR (Hardhat's Rust runtime over revm, `@nomicfoundation/edr`,
 * already in node_modules as Hardhat's), given the same genesis state directly (no RPC), its
 * `eth_call` of the same swap through its in-process request handler, timed in a child process of
 * its own (this same script, BENCH_SIM_EDR_PEER=1) so that the memory figure stays this process's
 * (EDR with the devnet took ~700 MB more); its return data must equal ours. tevm is not installed
 * (no dependency is added for a benchmark): reported as skipped.
 *
 * Options (environment): BENCH_ITERATIONS (default 400), BENCH_WARMUP (default 50),
 * BENCH_SIM_EDR_MIMALLOC_PURGE_DELAY (default -1: see EDR_MIMALLOC_PURGE_DELAY).
 */
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { readFileSync } from 'node:fs'
import { encodeFunctionData, parseAbi, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvilRpc, startAnvil } from '../test/support/anvil.ts'
import { summarize } from './lib/stats.ts'
import { DevnetStateSource } from '../src/chain/memory/devnet-source.ts'
import { ForkStateSource, STATE_CACHE_DEFAULTS } from '../src/chain/fork/index.ts'
import type { Address } from '../src/chain/types.ts'
import { commonForChain } from '../src/evm/chain-config.ts'
import { Simulator, type CallRequest } from '../src/evm/simulator.ts'
import { decodeSignedTransaction } from '../src/tx/index.ts'
import { bytesToHexString } from '../src/chain/quantity.ts'

const GENESIS = 'fixtures/devnet/genesis.json'
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 400)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 50)

interface Registry {
  chainId: number
  tokens: Array<{ symbol: string; address: string }>
  v2: { router02: string }
  v3: { swapRouter: string }
  devAccounts: { accounts: Array<{ address: string; privateKey: Hex }> }
}
const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as Registry
const token = (symbol: string) => registry.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address
const dev = registry.devAccounts.accounts[0]
const from = dev.address.toLowerCase() as Address
const DEADLINE = 2n ** 40n

const swaps: Record<'v2' | 'v3', CallRequest> = {
  v2: {
    from,
    to: registry.v2.router02.toLowerCase() as Address,
    data: encodeFunctionData({
      abi: parseAbi(['function swapExactTokensForTokens(uint256,uint256,address[],address,uint256) returns (uint256[])']),
      functionName: 'swapExactTokensForTokens',
      args: [10n ** 18n, 0n, [token('WETH'), token('USDC')], from, DEADLINE],
    }),
  },
  v3: {
    from,
    to: registry.v3.swapRouter.toLowerCase() as Address,
    data: encodeFunctionData({
      abi: parseAbi([
        'function exactInputSingle((address tokenIn,address tokenOut,uint24 fee,address recipient,uint256 deadline,uint256 amountIn,uint256 amountOutMinimum,uint160 sqrtPriceLimitX96)) payable returns (uint256)',
      ]),
      functionName: 'exactInputSingle',
      args: [{ tokenIn: token('WETH'), tokenOut: token('USDC'), fee: 500, recipient: from, deadline: DEADLINE, amountIn: 10n ** 18n, amountOutMinimum: 0n, sqrtPriceLimitX96: 0n }],
    }),
  },
}

/** Times `fn` ITERATIONS times after WARMUP calls; `between` runs untimed before each timed call. */
async function time(fn: () => Promise<unknown>, between?: () => void): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn()
  const out: number[] = []
  for (let i = 0; i < ITERATIONS; i++) {
    between?.()
    const t = performance.now()
    await fn()
    out.push(performance.now() - t)
  }
  return out
}

const round = (x: number) => Math.round(x * 1000) / 1000

interface GenesisFile {
  config: { chainId: number }
  alloc: Record<string, { balance?: string; nonce?: string; code?: string; storage?: Record<string, string> }>
  gasLimit: string
  baseFeePerGas: string
  timestamp: string
  coinbase: string
}

interface CallRequestJson {
  from: string
  to: string
  data: string
}

/** eth_call of a request on an in-process peer. */
type PeerCall = (request: CallRequestJson) => Promise<Hex>

/** What the EDR peer process is asked (one swap) and answers: its return data and its timings. */
interface PeerAsk {
  request: CallRequestJson
}
type PeerAnswer = { output: Hex; samples: number[] } | { error: string }

/**
 * EDR (revm) in this process with the devnet genesis loaded as its genesis state (accounts, code,
 * storage), Prague rules as the devnet's; requests go through its request handler, no socket.
 */
async function startEdr(genesisPath: string): Promise<{ call: PeerCall } | { skipped: string }> {
  let edr: typeof import('@nomicfoundation/edr')
  try {
    edr = await import('@nomicfoundation/edr')
  } catch (err) {
    return { skipped: `@nomicfoundation/edr does not load: ${(err as Error).message}` }
  }
  const genesis = JSON.parse(readFileSync(genesisPath, 'utf8')) as GenesisFile
  const bytes = (hex: string) => Buffer.from(hex.replace(/^0x/, ''), 'hex')
  const context = new edr.EdrContext()
  await context.registerProviderFactory(edr.L1_CHAIN_TYPE, edr.l1ProviderFactory())
  const provider = await context.createProvider(
    edr.L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: false,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: false,
      bailOnTransactionFailure: false,
      blockGasLimit: BigInt(genesis.gasLimit),
      chainId: BigInt(genesis.config.chainId),
      coinbase: bytes(genesis.coinbase),
      genesisState: Object.entries(genesis.alloc).map(([address, account]) => ({
        address: bytes(address),
        balance: BigInt(account.balance ?? 0),
        nonce: BigInt(account.nonce ?? 0),
        code: account.code === undefined ? undefined : bytes(account.code),
        storage: Object.entries(account.storage ?? {}).map(([index, value]) => ({ index: BigInt(index), value: BigInt(value) })),
      })),
      hardfork: edr.l1HardforkToString(edr.SpecId.Prague),
      initialBaseFeePerGas: BigInt(genesis.baseFeePerGas),
      initialDate: BigInt(genesis.timestamp),
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: edr.MineOrdering.Priority } },
      networkId: BigInt(genesis.config.chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new edr.ContractDecoder(),
  )
  let id = 0
  const call: PeerCall = async (request) => {
    const response = await provider.handleRequest(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'eth_call', params: [request, 'latest'] }))
    const body = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as { result?: Hex; error?: unknown }
    if (body.result === undefined) throw new Error(`EDR eth_call failed: ${JSON.stringify(body.error)}`)
    return body.result
  }
  return { call }
}
const mb = (bytes: number) => Math.round(bytes / 1_048_576)

/**
 * A V8 collection every EDR_GC_EVERY timed calls of the EDR peer, outside the timed region: an
 * answer holds its call's traces (~1 MB native) until V8 collects it, and V8 sees only a small
 * object, so without it the peer's native memory grows between collections and every call pays
 * for fresh pages (see EDR_MIMALLOC_PURGE_DELAY). It favours the peer, never ours.
 */
const EDR_GC_EVERY = 10
let edrCalls = 0
function collectEdrAnswers(): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined && ++edrCalls % EDR_GC_EVERY === 0) gc()
}

/** The EDR peer process: EDR started, then each swap it is sent checked and timed in this process. */
async function serveEdrPeer(): Promise<void> {
  const edr = await startEdr(GENESIS)
  process.send!('call' in edr ? { ready: true } : { skipped: edr.skipped })
  if (!('call' in edr)) return process.disconnect()
  process.on('message', (ask: PeerAsk) => {
    const answer = async (): Promise<PeerAnswer> => {
      try {
        const output = await edr.call(ask.request)
        return { output, samples: await time(() => edr.call(ask.request), collectEdrAnswers) }
      } catch (err) {
        return { error: (err as Error).message }
      }
    }
    void answer().then((a) => process.send!(a))
  })
}

/**
 * EDR's allocator (mimalloc) setting for its peer process. Each EDR eth_call collects its traces
 * (~1 MB of native memory, held by the answer until V8 collects it); with mimalloc's default purge
 * delay that memory goes back to the kernel and the next calls fault in fresh zeroed pages: in a
 * perf profile of the peer, more than half its time was the kernel zeroing huge pages
 * (clear_page_erms under mi_page_free_list_extend), its V3 call read 1-9 ms by phases, and the
 * peer's RSS rose ~200 MB/s. `-1` (never purge) keeps the pages: the same call then reads
 * 0.6-1.0 ms steadily. A peer is measured at its best; BENCH_SIM_EDR_MIMALLOC_PURGE_DELAY
 * overrides it (an empty value leaves mimalloc's own default).
 */
const EDR_MIMALLOC_PURGE_DELAY = process.env.BENCH_SIM_EDR_MIMALLOC_PURGE_DELAY ?? '-1'

/** The EDR peer in a child process (see the module comment), or why there is none. */
async function startEdrPeer(): Promise<{ ask: (request: CallRequestJson) => Promise<{ output: Hex; samples: number[] }>; stop: () => void } | { skipped: string }> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: [...process.execArgv, '--expose-gc'], env: { ...process.env, BENCH_SIM_EDR_PEER: '1', ...(EDR_MIMALLOC_PURGE_DELAY === '' ? {} : { MIMALLOC_PURGE_DELAY: EDR_MIMALLOC_PURGE_DELAY }) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const first = await new Promise<{ ready?: true; skipped?: string }>((resolve) => {
    child.once('message', (m) => resolve(m as { ready?: true; skipped?: string }))
    child.once('exit', (code) => resolve({ skipped: `the EDR peer process exited (${code})` }))
  })
  if (first.ready !== true) {
    child.kill()
    return { skipped: first.skipped ?? 'the EDR peer did not start' }
  }
  const ask = (request: CallRequestJson) =>
    new Promise<{ output: Hex; samples: number[] }>((resolve, reject) => {
      child.once('message', (m) => {
        const a = m as PeerAnswer
        if ('error' in a) reject(new Error(`EDR: ${a.error}`))
        else resolve(a)
      })
      child.send({ request } satisfies PeerAsk)
    })
  return { ask, stop: () => void child.kill() }
}

if (process.env.BENCH_SIM_EDR_PEER === '1') {
  await serveEdrPeer()
} else {
  await main()
}

async function main(): Promise<void> {
const anvil = await startAnvil({ genesisPath: GENESIS })
const edr = await startEdrPeer()
try {
  const devnet = DevnetStateSource.fromGenesisFile(GENESIS)
  const sim = new Simulator({ common: commonForChain(devnet.chainId) })
  const base = sim.openState(devnet.latest())
  const account = privateKeyToAccount(dev.privateKey)

  const results: Record<string, unknown> = {}
  for (const kind of ['v2', 'v3'] as const) {
    const swap = swaps[kind]
    // gas: the same swap as a signed transaction, mined by anvil in the next block vs simulated by us
    const raw = await account.signTransaction({
      chainId: registry.chainId,
      type: 'eip1559',
      nonce: 0,
      to: swap.to,
      data: swap.data as Hex,
      gas: 1_000_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 0n,
    })
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(devnet.latest().block.timestamp + sim.blockTimeSeconds)])
    const hash = await anvilRpc<Hex>(anvil.url, 'eth_sendRawTransaction', [raw])
    await anvilRpc(anvil.url, 'evm_mine')
    const receipt = await anvilRpc<{ gasUsed: Hex; status: Hex }>(anvil.url, 'eth_getTransactionReceipt', [hash])
    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    const ours = await sim.transaction(base, decodeSignedTransaction(raw, { chainId: devnet.chainId, common: sim.common }).tx)
    const anvilGas = BigInt(receipt.gasUsed)
    if (ours.gasUsed !== anvilGas || receipt.status !== '0x1' || ours.status !== 'success') {
      throw new Error(`${kind}: gas differs: ours ${ours.gasUsed} (${ours.status}), anvil ${anvilGas} (${receipt.status})`)
    }

    const request = { from: swap.from, to: swap.to!, data: swap.data as Hex }
    // the in-process peer answers what we answer, or its figures mean nothing
    const oursMs = await time(() => sim.call(base, swap))
    const peerMs = await time(() => anvilRpc(anvil.url, 'eth_call', [request, 'latest']))
    // the EDR peer times the same call in its process, then this one waits
    const edrAnswer = 'ask' in edr ? await edr.ask(request) : undefined
    if (edrAnswer !== undefined) {
      const oursOut = bytesToHexString((await sim.call(base, swap)).returnData)
      if (edrAnswer.output !== oursOut) throw new Error(`${kind}: EDR's eth_call returns ${edrAnswer.output}, ours ${oursOut}`)
    }
    const edrMs = edrAnswer?.samples
    const o = summarize(oursMs)
    const p = summarize(peerMs)
    const e = edrMs === undefined ? undefined : summarize(edrMs)
    results[kind] = {
      gas: Number(anvilGas),
      gasIdentical: true,
      p50_ms: round(o.p50),
      p99_ms: round(o.p99),
      anvil_eth_call_p50_ms: round(p.p50),
      anvil_eth_call_p99_ms: round(p.p99),
      ratio_p50: round(o.p50 / p.p50),
      ...(e === undefined ? {} : { edr_eth_call_p50_ms: round(e.p50), edr_eth_call_p99_ms: round(e.p99), ratio_edr_p50: round(o.p50 / e.p50), edrReturnDataIdentical: true }),
    }
    const edrText = e === undefined ? '' : ` | EDR in-process eth_call p50 ${e.p50.toFixed(3)} ms p99 ${e.p99.toFixed(3)} ms, ratio ${(o.p50 / e.p50).toFixed(2)}`
    console.log(`${kind} swap: ours p50 ${o.p50.toFixed(3)} ms p99 ${o.p99.toFixed(3)} ms | anvil eth_call p50 ${p.p50.toFixed(3)} ms p99 ${p.p99.toFixed(3)} ms | ratio ${(o.p50 / p.p50).toFixed(2)}${edrText} | gas ${anvilGas} (identical)`)
  }

  // cold fork: a fresh fork of anvil at the genesis block, one V3 swap
  const fork = await ForkStateSource.create({ url: anvil.url, blockNumber: 0n })
  const forkSim = new Simulator({ common: commonForChain(fork.chainId) })
  const before = fork.stats()
  const t0 = performance.now()
  await forkSim.call(forkSim.openState(fork.latest()), swaps.v3)
  const coldMs = performance.now() - t0
  const after = fork.stats()
  const warmFork = summarize(await time(() => forkSim.call(forkSim.openState(fork.latest()), swaps.v3)))
  const coldFork = {
    v3_swap_ms: round(coldMs),
    upstream_rpc_calls: after.rpcCalls - before.rpcCalls,
    upstream_round_trips: after.httpRequests - before.httpRequests,
    warm_p50_ms: round(warmFork.p50),
    warm_p99_ms: round(warmFork.p99),
    warm_upstream_calls: fork.stats().rpcCalls - after.rpcCalls,
  }
  console.log(`cold fork V3 swap: ${coldFork.v3_swap_ms} ms, ${coldFork.upstream_rpc_calls} upstream calls in ${coldFork.upstream_round_trips} round trips; warm fork p50 ${coldFork.warm_p50_ms} ms, ${coldFork.warm_upstream_calls} further upstream calls`)

  await fork.close()

  // memory: a fork cache filled to both default bounds with real upstream reads (batched): the
  // code cache (64 MiB) with distinct 24 KiB contracts set on anvil, then the state entries
  // (250,000) with storage slots; read through a fork of anvil at the head holding those contracts
  const codeSize = 24_576
  const contracts = Math.ceil(STATE_CACHE_DEFAULTS.maxCodeBytes / codeSize) + 64
  const codeAddresses: Address[] = []
  for (let i = 0; i < contracts; i++) {
    const address = `0x${(0xc0de_0000_0000n + BigInt(i)).toString(16).padStart(40, '0')}` as Address
    const code = randomBytes(codeSize)
    code[0] = 0x00 // STOP: never 0xEF (EIP-3541)
    await anvilRpc(anvil.url, 'anvil_setCode', [address, `0x${code.toString('hex')}`])
    codeAddresses.push(address)
  }
  await anvilRpc(anvil.url, 'evm_mine')
  const full = await ForkStateSource.create({ url: anvil.url, followHeads: false })
  const reader = full.latest()
  const batch = 1_000
  for (let start = 0; start < codeAddresses.length; start += 100) await reader.prefetch?.({ accounts: codeAddresses.slice(start, start + 100) })
  const bound = STATE_CACHE_DEFAULTS.maxEntries
  const filler = token('USDC')
  for (let start = 0; start < bound; start += batch) {
    const storage = Array.from({ length: batch }, (_, i) => ({ address: filler, slot: BigInt(1_000_000 + start + i) }))
    await reader.prefetch?.({ storage })
  }
  const stats = full.stats()
  global.gc?.()
  const memory = {
    cache_entries: stats.stateEntries,
    cache_bound: bound,
    code_cache_bytes: stats.codeBytes,
    code_cache_bound: STATE_CACHE_DEFAULTS.maxCodeBytes,
    code_cache_entries: stats.codeEntries,
    rss_mb: mb(process.memoryUsage().rss),
    peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
    heap_used_mb: mb(process.memoryUsage().heapUsed),
  }
  console.log(`memory with devnet + fork cache at ${stats.stateEntries}/${bound} entries and ${mb(stats.codeBytes)}/${mb(STATE_CACHE_DEFAULTS.maxCodeBytes)} MB of code: rss ${memory.rss_mb} MB, peak rss ${memory.peak_rss_mb} MB`)
  await full.close()

  const v3 = results.v3 as { p50_ms: number; p99_ms: number; anvil_eth_call_p50_ms: number; anvil_eth_call_p99_ms: number; ratio_p50: number; edr_eth_call_p50_ms?: number; ratio_edr_p50?: number }
  const v2 = results.v2 as { ratio_p50: number; ratio_edr_p50?: number }
  console.log(
    JSON.stringify({
      name: 'bench:sim',
      iterations: ITERATIONS,
      p50_ms: v3.p50_ms,
      p99_ms: v3.p99_ms,
      peer: 'anvil eth_call over HTTP (loopback), same swap, same state',
      peer_p50_ms: v3.anvil_eth_call_p50_ms,
      peer_p99_ms: v3.anvil_eth_call_p99_ms,
      ratio: v3.ratio_p50,
      // in-process peers: the ratio of ours to each, V3 and V2 (absent when the peer did not load)
      peers: {
        anvil: { transport: 'HTTP eth_call (loopback)', v3_ratio_p50: v3.ratio_p50, v2_ratio_p50: v2.ratio_p50 },
        ...('ask' in edr
          ? { edr: { transport: 'in-process eth_call (request handler, state loaded directly)', mimalloc_purge_delay: EDR_MIMALLOC_PURGE_DELAY === '' ? 'default' : EDR_MIMALLOC_PURGE_DELAY, v3_p50_ms: v3.edr_eth_call_p50_ms, v3_ratio_p50: v3.ratio_edr_p50, v2_ratio_p50: v2.ratio_edr_p50 } }
          : {}),
      },
      peers_skipped: { ...('skipped' in edr ? { edr: edr.skipped } : {}), tevm: 'not installed: no dependency is added for a benchmark' },
      v2: results.v2,
      v3: results.v3,
      coldFork,
      memory,
    }),
  )
} finally {
  if ('stop' in edr) edr.stop()
  await anvil.stop()
}
}
