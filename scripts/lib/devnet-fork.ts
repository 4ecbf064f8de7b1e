/**
 * Fork mode for the benchmarks: an anvil loaded with the devnet genesis (the same contracts and
 * state as the embedded devnet) that mines a block every `blockTimeSeconds`, and the environment
 * that points the service at it (fork mode requires its chain contracts, keys and relays named).
 * The keys are made up for the run: fork mode refuses the documented development ones. The chain
 * contracts come from the devnet registry as the fork tests take them (test/support/devnet.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { devnetForkEnv, GENESIS_PATH, loadRegistry } from '../../test/support/devnet.ts'
import { startAnvil, type AnvilInstance } from '../../test/support/anvil.ts'
import { freePort } from '../../test/support/net.ts'
import { startServiceProcess } from '../../test/support/service-process.ts'

export interface DevnetFork {
  anvil: AnvilInstance
  /** the service's environment for a fork of it (its own fresh DATA_DIR: a devnet service may hold ./data) */
  env: Record<string, string>
  /** the API key and partner token the service accepts */
  apiKey: string
  partnerToken: string
  /** stops anvil and removes the DATA_DIR */
  stop(): Promise<void>
}

export async function startDevnetFork(blockTimeSeconds: number): Promise<DevnetFork> {
  const anvil = await startAnvil({ genesisPath: GENESIS_PATH, blockTime: blockTimeSeconds })
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-fork-'))
  const apiKey = 'bench-fork-api-key-0123456789'
  const partnerToken = 'bench-fork-partner-token-0123456789'
  const env = {
    ...devnetForkEnv(loadRegistry()),
    UPSTREAM_RPC_URL: anvil.url,
    API_KEYS: apiKey,
    PARTNER_TOKENS: `bench:${partnerToken}`,
    // nothing is submitted by the benchmarks; the dispatcher needs somewhere to send
    RELAYS: '[{"name":"unused","url":"http://127.0.0.1:9"}]',
    BLOCK_TIME_SECONDS: String(blockTimeSeconds),
    DATA_DIR: dataDir,
  }
  const stop = async () => {
    await anvil.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { anvil, env, apiKey, partnerToken, stop }
}

/**
 * The fork source's counters from the service's /metrics: upstream calls and HTTP requests, state
 * reads that missed the cache (each waited for the upstream), the head's number.
 */
export async function upstreamCounters(baseUrl: string): Promise<{ calls: number; requests: number; misses: number; head: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  let calls = 0
  let requests = 0
  let misses = 0
  let head = 0
  for (const line of text.split('\n')) {
    if (line.startsWith('upstream_rpc_calls_total{')) calls += Number(line.slice(line.lastIndexOf(' ') + 1))
    else if (line.startsWith('upstream_http_requests_total ')) requests = Number(line.slice(line.lastIndexOf(' ') + 1))
    else if (line.startsWith('state_cache_misses_total ')) misses = Number(line.slice(line.lastIndexOf(' ') + 1))
    else if (line.startsWith('state_head_block ')) head = Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return { calls, requests, misses, head }
}

export interface ForkRunOptions {
  blockTimeSeconds: number
  /** how long requests are sent, one after the other */
  seconds: number
  /** extra service environment */
  env?: Record<string, string>
  /** requests sent before measuring (not measured) */
  warmUp: number
  /** sends request number `i` to the service at `baseUrl`; resolves with its latency in ms */
  send(baseUrl: string, fork: DevnetFork, i: number): Promise<number>
}

export interface ForkRunResult {
  /** latency of each measured request, ms */
  samples: number[]
  blocks: number
  seconds: number
  /** upstream JSON-RPC calls, HTTP requests and cache misses over the run */
  calls: number
  requests: number
  misses: number
}

/**
 * Starts the service (npm start's process) in fork mode over a fresh devnet fork, sends `warmUp`
 * requests, then requests one after the other for `seconds` while blocks keep coming, and reads
 * the fork's counters from /metrics before and after.
 */
export async function runOnDevnetFork(options: ForkRunOptions): Promise<ForkRunResult> {
  const fork = await startDevnetFork(options.blockTimeSeconds)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const service = await startServiceProcess(port, { ...fork.env, LOCAL_BUILDER_PORT: '0', ...options.env })
  try {
    for (let i = 0; i < options.warmUp; i++) await options.send(base, fork, i)
    const before = await upstreamCounters(base)
    const t = performance.now()
    const samples: number[] = []
    while (performance.now() - t < options.seconds * 1000) samples.push(await options.send(base, fork, samples.length))
    const seconds = (performance.now() - t) / 1000
    const after = await upstreamCounters(base)
    return { samples, blocks: after.head - before.head, seconds, calls: after.calls - before.calls, requests: after.requests - before.requests, misses: after.misses - before.misses }
  } finally {
    service.kill('SIGKILL')
    await fork.stop()
  }
}

/** The fork figures of a run for a benchmark's JSON line (`per`: "quote" or "request"). */
export function forkFigures(run: ForkRunResult, blockTimeSeconds: number, per: string): Record<string, number> {
  const n = run.samples.length
  const r = (x: number) => Math.round(x * 100) / 100
  return {
    block_time_s: blockTimeSeconds,
    [`${per}s`]: n,
    blocks: run.blocks,
    seconds: r(run.seconds),
    [`upstream_calls_per_${per}`]: r(run.calls / n),
    [`upstream_requests_per_${per}`]: r(run.requests / n),
    [`cold_reads_per_${per}`]: r(run.misses / n),
    upstream_calls_per_block: run.blocks > 0 ? r(run.calls / run.blocks) : 0,
    upstream_requests_per_block: run.blocks > 0 ? r(run.requests / run.blocks) : 0,
  }
}
