/**
 * A flow of many users' private transactions, several per block, against the service started as
 * `npm start` starts it (its own process, embedded devnet, its local builder sealing a block every
 * `blockTimeMs`), over real HTTP. Used by `npm run bench:flow` and by the end-to-end flow test.
 *
 * Every block, right after the head arrives, `usersPerBlock` distinct devnet users (never the
 * searcher accounts) each sign one swap on the head and submit it with
 * eth_sendPrivateRawTransaction:
 * - `arb` (arbShare): 20-60 ETH for a token on its V2 WETH pair, minimum output 1: it leaves an
 *   arbitrage against the V3 pools; the six WETH pairs are used in turn, so several touch the same
 *   pools in one block;
 * - `fragile` (fragileShare): ETH for USDC on the V2 pair with the exact output of the head as its
 *   minimum: valid alone, it reverts once another swap in the same direction lands before it;
 * - `small`: 0.05-0.5 ETH for USDC or DAI on V2, minimum output 1 (the same pools as the arbs).
 * Tips vary per user (0.1-2 gwei) so the builder's ordering by payment matters.
 *
 * After the last block it waits `settleBlocks` more blocks, then reads every submission's status
 * (GET /v1/submissions/{hash}) and the builder's receipts, and reports what landed.
 */
import { type ChildProcess } from 'node:child_process'
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeFunctionResult, encodeFunctionData, parseAbi, parseEther, type Hex } from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

import { freePort } from './net.ts'
import { startServiceProcess } from './service-process.ts'

export const FLOW_PARTNER_TOKEN = 'dev-partner-token-insecure'

export interface FlowOptions {
  /** users submitting in each block. Default 20. */
  usersPerBlock?: number
  /** blocks with submissions. Default 10. */
  blocks?: number
  /** share of users whose swap leaves an arbitrage. Default 0.5. */
  arbShare?: number
  /** share of users whose swap reverts once another lands before it. Default 0.1. */
  fragileShare?: number
  /** the local builder's block time. Default 2000 ms. */
  blockTimeMs?: number
  /** blocks waited after the last submissions before reading the outcome. Default 4. */
  settleBlocks?: number
  /** keep the service's DATA_DIR (the caller removes it) */
  keepDataDir?: boolean
  /** extra environment for the service */
  env?: Record<string, string>
  /** write the service's log (pino JSON lines) to this file */
  serviceLogFile?: string
  /** called after the outcome is read, while the service and its builder still run */
  beforeStop?: (running: { builderUrl: string; serviceUrl: string; submissions: readonly FlowSubmission[] }) => Promise<void>
  log?: (message: string) => void
}

export type SwapKind = 'arb' | 'fragile' | 'small'

export interface FlowSubmission {
  hash: Hex
  raw: Hex
  kind: SwapKind
  sender: Hex
  /** the head when its acknowledgement returned (it was signed on the head before or this one) */
  ackHead: bigint
  ackMs: number
  status?: FlowStatus
}

/** The parts of GET /v1/submissions/{hash} the flow reads. */
export interface FlowStatus {
  stage: string
  final: null | { state: string; block?: string; reason?: string; backrunIncluded?: boolean; backrunTxHash?: Hex; backrunGrossProfit?: string }
  blocks: Array<{ block: string; backrun: null | { status: string; txHash?: Hex; grossProfit?: string; reason?: string }; bundles: Array<{ relay: string; role: string; status: string; reason?: string }> }>
}

export interface FlowReport {
  submitted: number
  included: number
  /** ended as dropped because the tx reverted or its nonce was used on the state it met: not valid any more */
  droppedInvalid: number
  /** ended otherwise without inclusion (expired, dropped for another reason) */
  lost: number
  /** no final state when the flow was read */
  pending: number
  /** included / (submitted - droppedInvalid) */
  validIncludedShare: number
  blocksToInclusion: { p50: number; p99: number; max: number }
  /** included submissions whose inclusion block had a backrun planned for it */
  backrunsAppended: number
  backrunsIncluded: number
  /** included backruns whose realized gross profit (receipt) equals the one reported for that block */
  realizedEqualsReported: number
  reportedProfitWei: bigint
  realizedProfitWei: bigint
  ackP50Ms: number
  ackP99Ms: number
  /** the service's DATA_DIR when keepDataDir was set */
  dataDir?: string
  builderUrl: string
  firstBlock: bigint
  lastBlock: bigint
  submissions: FlowSubmission[]
}

interface Registry {
  chainId: number
  weth: string
  tokens: Array<{ symbol: string; address: string }>
  v2: { router02: string }
  devAccounts: { searcherIndexes?: number[]; accounts: Array<{ index: number; address: string; privateKey: Hex }> }
}

const ROUTER_ABI = parseAbi([
  'function swapExactETHForTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline) payable returns (uint256[] amounts)',
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
])
const ARB_TOKENS = ['USDC', 'USDT', 'DAI', 'WBTC', 'UNI', 'LINK'] as const
const GWEI = 1_000_000_000n

export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(30_000) })
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } }
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.code} ${body.error.message}`)
  return body.result as T
}

/** A deterministic sequence in [0, 1) (the flow is the same on every run). */
function sequence(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s / 2 ** 32
  }
}

export async function runFlow(options: FlowOptions = {}): Promise<FlowReport> {
  const usersPerBlock = options.usersPerBlock ?? 20
  const blocks = options.blocks ?? 10
  const arbShare = options.arbShare ?? 0.5
  const fragileShare = options.fragileShare ?? 0.1
  const blockTimeMs = options.blockTimeMs ?? 2_000
  const settleBlocks = options.settleBlocks ?? 4
  const log = options.log ?? (() => undefined)
  const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as Registry
  const reserved = new Set(registry.devAccounts.searcherIndexes ?? [8])
  const users: PrivateKeyAccount[] = registry.devAccounts.accounts.filter((a) => !reserved.has(a.index)).map((a) => privateKeyToAccount(a.privateKey))
  if (users.length < usersPerBlock) throw new Error(`the devnet has ${users.length} user accounts, fewer than ${usersPerBlock} users per block`)
  const token = (symbol: string): Hex => registry.tokens.find((t) => t.symbol === symbol)!.address as Hex
  const router = registry.v2.router02 as Hex

  const dataDir = mkdtempSync(join(tmpdir(), 'flow-'))
  const port = await freePort()
  const builderPort = await freePort()
  const builderUrl = `http://127.0.0.1:${builderPort}`
  const serviceUrl = `http://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  try {
    const logFd = options.serviceLogFile === undefined ? undefined : openSync(options.serviceLogFile, 'w')
    child = await startServiceProcess(
      port,
      {
        DATA_DIR: dataDir,
        LOCAL_BUILDER_PORT: String(builderPort),
        LOCAL_BUILDER_BLOCK_TIME_MS: String(blockTimeMs),
        ...(logFd === undefined ? {} : { LOG_LEVEL: 'info' }),
        ...options.env,
      },
      undefined,
      logFd,
    )
    const head = async () => BigInt(await rpc<Hex>(builderUrl, 'eth_blockNumber'))
    const nextHead = async (after: bigint): Promise<bigint> => {
      const deadline = Date.now() + blockTimeMs * 5 + 10_000
      for (;;) {
        const h = await head()
        if (h > after) return h
        if (Date.now() > deadline) throw new Error(`no block after ${after} within ${blockTimeMs * 5 + 10_000} ms`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }

    const random = sequence(0xf10)
    const submissions: FlowSubmission[] = []
    /** a user is busy until its submission is final (its next nonce depends on it) */
    const busy = new Map<string, Hex>()
    let current = await nextHead(await head())
    const firstBlock = current + 1n
    let userCursor = 0
    for (let b = 0; b < blocks; b++) {
      if (b > 0) current = await nextHead(current)
      // users whose last submission ended are free again
      await Promise.all(
        [...busy].map(async ([address, hash]) => {
          const status = await readStatus(serviceUrl, hash)
          if (status?.final !== null && status?.final !== undefined) busy.delete(address)
        }),
      )
      const block = await rpc<{ baseFeePerGas: Hex; timestamp: Hex }>(builderUrl, 'eth_getBlockByNumber', ['latest', false])
      const baseFee = BigInt(block.baseFeePerGas)
      const deadline = BigInt(block.timestamp) + 3_600n
      const chosen: PrivateKeyAccount[] = []
      for (let tried = 0; tried < users.length && chosen.length < usersPerBlock; tried++) {
        const user = users[userCursor++ % users.length]
        if (!busy.has(user.address)) chosen.push(user)
      }
      const signed = await Promise.all(
        chosen.map(async (user, i) => {
          const arbs = Math.round(usersPerBlock * arbShare)
          const fragiles = Math.round(usersPerBlock * fragileShare)
          const kind: SwapKind = i < arbs ? 'arb' : i < arbs + fragiles ? 'fragile' : 'small'
          const nonce = BigInt(await rpc<Hex>(builderUrl, 'eth_getTransactionCount', [user.address, 'latest']))
          let value: bigint
          let path: Hex[]
          let minOut = 1n
          if (kind === 'arb') {
            value = parseEther(String(20 + Math.floor(random() * 40)))
            path = [token('WETH'), token(ARB_TOKENS[(b * usersPerBlock + i) % ARB_TOKENS.length])]
          } else if (kind === 'fragile') {
            value = parseEther('5')
            path = [token('WETH'), token('USDC')]
            const quoted = await rpc<Hex>(builderUrl, 'eth_call', [{ to: router, data: encodeFunctionData({ abi: ROUTER_ABI, functionName: 'getAmountsOut', args: [value, path] }) }, 'latest'])
            minOut = (decodeFunctionResult({ abi: ROUTER_ABI, functionName: 'getAmountsOut', data: quoted }) as readonly bigint[])[1]
          } else {
            value = parseEther((0.05 + random() * 0.45).toFixed(3))
            path = [token('WETH'), token(random() < 0.5 ? 'USDC' : 'DAI')]
          }
          const tip = GWEI / 10n + BigInt(Math.floor(random() * 19)) * (GWEI / 10n)
          const raw = await user.signTransaction({
            type: 'eip1559',
            chainId: registry.chainId,
            nonce: Number(nonce),
            to: router,
            value,
            data: encodeFunctionData({ abi: ROUTER_ABI, functionName: 'swapExactETHForTokens', args: [minOut, path, user.address, deadline] }),
            gas: 300_000n,
            maxFeePerGas: 2n * baseFee + tip,
            maxPriorityFeePerGas: tip,
          })
          return { raw, kind, sender: user.address.toLowerCase() as Hex }
        }),
      )
      const acked = await Promise.all(
        signed.map(async (s) => {
          const started = performance.now()
          const hash = await rpc<Hex>(`${serviceUrl}/rpc/${FLOW_PARTNER_TOKEN}/submit`, 'eth_sendPrivateRawTransaction', [{ tx: s.raw }])
          const ackMs = performance.now() - started
          // the head when the acknowledgement came back: inclusion is counted from there
          return { ...s, hash, ackHead: await head(), ackMs }
        }),
      )
      for (const a of acked) {
        submissions.push(a)
        busy.set(a.sender, a.hash)
      }
      log(`block ${current + 1n}: ${acked.length} submissions (${acked.filter((a) => a.kind === 'arb').length} arb, ${acked.filter((a) => a.kind === 'fragile').length} fragile)`)
    }
    for (let i = 0; i < settleBlocks; i++) current = await nextHead(current)
    await Promise.all(
      submissions.map(async (s) => {
        s.status = await readStatus(serviceUrl, s.hash)
      }),
    )
    await options.beforeStop?.({ builderUrl, serviceUrl, submissions })
    return summarizeFlow(submissions, { builderUrl, firstBlock, lastBlock: current, ...(options.keepDataDir === true ? { dataDir } : {}) })
  } finally {
    if (child !== undefined) await stop(child)
    if (options.keepDataDir !== true) rmSync(dataDir, { recursive: true, force: true })
  }
}

async function readStatus(serviceUrl: string, hash: Hex): Promise<FlowStatus | undefined> {
  const res = await fetch(`${serviceUrl}/v1/submissions/${hash}`, { headers: { authorization: `Bearer ${FLOW_PARTNER_TOKEN}` }, signal: AbortSignal.timeout(30_000) })
  if (res.status !== 200) return undefined
  const body = (await res.json()) as { submissions: FlowStatus[] }
  return body.submissions[0]
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

const INVALID = /reverts on the state of block|can never be included/

function summarizeFlow(submissions: FlowSubmission[], where: { builderUrl: string; firstBlock: bigint; lastBlock: bigint; dataDir?: string }): FlowReport {
  let included = 0
  let droppedInvalid = 0
  let lost = 0
  let pending = 0
  let backrunsAppended = 0
  let backrunsIncluded = 0
  let realizedEqualsReported = 0
  let reported = 0n
  let realized = 0n
  const toInclusion: number[] = []
  for (const s of submissions) {
    const final = s.status?.final ?? null
    if (final === null) {
      pending++
      continue
    }
    if (final.state === 'included' && final.block !== undefined) {
      included++
      const block = BigInt(final.block)
      toInclusion.push(Number(block - s.ackHead))
      const plan = s.status?.blocks.find((b) => b.block === final.block)?.backrun
      if (plan?.status === 'appended') backrunsAppended++
      if (final.backrunIncluded === true) {
        backrunsIncluded++
        const planned = BigInt(plan?.grossProfit ?? '0')
        const got = BigInt(final.backrunGrossProfit ?? '-1')
        reported += planned
        realized += got < 0n ? 0n : got
        if (got === planned) realizedEqualsReported++
      }
    } else if (final.state === 'dropped' && INVALID.test(final.reason ?? '')) {
      droppedInvalid++
    } else {
      lost++
    }
  }
  const sorted = [...toInclusion].sort((a, b) => a - b)
  const at = (q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)])
  const acks = submissions.map((s) => s.ackMs).sort((a, b) => a - b)
  const ackAt = (q: number) => (acks.length === 0 ? 0 : acks[Math.min(acks.length - 1, Math.ceil(q * acks.length) - 1)])
  const valid = submissions.length - droppedInvalid
  return {
    submitted: submissions.length,
    included,
    droppedInvalid,
    lost,
    pending,
    validIncludedShare: valid === 0 ? 1 : included / valid,
    blocksToInclusion: { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 },
    backrunsAppended,
    backrunsIncluded,
    realizedEqualsReported,
    reportedProfitWei: reported,
    realizedProfitWei: realized,
    ackP50Ms: ackAt(0.5),
    ackP99Ms: ackAt(0.99),
    builderUrl: where.builderUrl,
    firstBlock: where.firstBlock,
    lastBlock: where.lastBlock,
    ...(where.dataDir === undefined ? {} : { dataDir: where.dataDir }),
    submissions,
  }
}
