/**
 * npm run cluster (scripts/cluster.ts), as a newcomer runs it: it prints one JSON line once every
 * replica is ready; a private submission goes through each replica and the other replica serves
 * its lifecycle (one database); SIGTERM stops every process it started (the replicas, the chain,
 * PostgreSQL), none is left behind.
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

import pg from 'pg'
import { describe, expect, it } from 'vitest'

import { loadRegistry, signedTransfer } from './support/devnet.ts'

interface ClusterLine {
  replicas: Array<{ url: string; pid: number }>
  builder: string
  partnerToken: string
  apiKey: string
  databaseUrl: string
}

const registry = loadRegistry()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('npm run cluster', () => {
  it('starts two replicas on one database and chain, prints where they are, and SIGTERM stops everything', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts'], {
      env: { ...process.env, CLUSTER_BLOCK_TIME_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4_000)
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve)
        void exited.then((code) => reject(new Error(`cluster exited with ${code}: ${stderr}`)))
      })
      const cluster = JSON.parse(line) as ClusterLine
      expect(Object.keys(cluster).sort()).toEqual(['apiKey', 'builder', 'databaseUrl', 'partnerToken', 'replicas'])
      expect(cluster.replicas).toHaveLength(2)
      for (const r of cluster.replicas) {
        expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        expect(alive(r.pid)).toBe(true)
      }
      expect(cluster.builder).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(cluster.databaseUrl).toMatch(/^postgres:\/\/.*@127\.0\.0\.1:\d+\//)

      // one submission through each replica; each is read back from the other one
      const hashes: string[] = []
      for (const [i, replica] of cluster.replicas.entries()) {
        const raw = await signedTransfer(registry.devAccounts.accounts[2 + i].privateKey, 0, registry.chainId)
        const res = await fetch(`${replica.url}/rpc/${cluster.partnerToken}/submit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: raw }] }),
        })
        const answer = (await res.json()) as { result?: string; error?: unknown }
        expect(answer.error).toBeUndefined()
        expect(answer.result).toMatch(/^0x[0-9a-f]{64}$/)
        hashes.push(answer.result as string)
      }
      for (const [i, hash] of hashes.entries()) {
        const other = cluster.replicas[(i + 1) % 2]
        const res = await fetch(`${other.url}/v1/submissions/${hash}`, { headers: { authorization: `Bearer ${cluster.partnerToken}` } })
        expect(res.status).toBe(200)
        expect(((await res.json()) as { hash: string }).hash).toBe(hash)
      }

      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      for (const r of cluster.replicas) expect(alive(r.pid), `replica ${r.pid} still runs`).toBe(false)
      await expect(fetch(cluster.builder, { method: 'POST', body: '{}', signal: AbortSignal.timeout(2_000) })).rejects.toThrow()
      const db = new pg.Client({ connectionString: cluster.databaseUrl, connectionTimeoutMillis: 2_000 })
      await expect(db.connect()).rejects.toThrow()
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 180_000)
})
