/**
 * The service process for bench:soak: started with the node arguments of package.json's start
 * script (startScriptNodeArgs, as startServiceProcess and `npm start` do), on 127.0.0.1, but with
 * its stdout and stderr piped through this process so the last lines are at hand when it crashes
 * under load. Also: its resident memory from /proc/<pid>/status, and a stop that always ends it
 * (SIGTERM, then SIGKILL after a grace period).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { startScriptEnv, startScriptNodeArgs } from '../../test/support/service-process.ts'

export interface SoakService {
  child: ChildProcess
  pid: number
  /** the last lines the service wrote to stderr / stdout (its pino log at LOG_LEVEL) */
  lastStderr(): string[]
  lastStdout(): string[]
  /** set once the process has exited */
  exit(): { code: number | null; signal: NodeJS.Signals | null; atMs: number } | undefined
  /** SIGTERM, then SIGKILL after graceMs; resolves once it has exited */
  stop(graceMs?: number): Promise<void>
}

const KEEP_LINES = 40

function tail(stream: NodeJS.ReadableStream | null, echo: NodeJS.WritableStream | undefined): string[] {
  const lines: string[] = []
  let partial = ''
  stream?.setEncoding('utf8')
  stream?.on('data', (chunk: string) => {
    if (echo !== undefined) echo.write(chunk)
    const parts = (partial + chunk).split('\n')
    partial = parts.pop() ?? ''
    for (const line of parts) {
      lines.push(line)
      if (lines.length > KEEP_LINES) lines.shift()
    }
  })
  return lines
}

export async function startSoakService(port: number, env: Record<string, string>): Promise<SoakService> {
  // SOAK_SERVICE_NODE_ARGS: extra node arguments for the service only (e.g. --trace-gc), to see where its
  // memory goes; after npm start's own, so that a V8 flag given again here wins
  const extra = (process.env.SOAK_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter((a) => a !== '')
  const start = startScriptNodeArgs()
  const args = [...start.slice(0, -1), ...extra, ...start.slice(-1)]
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...startScriptEnv(), LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (child.pid === undefined) throw new Error('the service process did not start')
  const pid = child.pid
  const stderr = tail(child.stderr, process.stderr)
  // SOAK_SERVICE_STDOUT: a file that receives the service's whole stdout (its log, and --trace-gc's lines)
  const stdoutFile = process.env.SOAK_SERVICE_STDOUT
  const stdoutCopy = stdoutFile === undefined || stdoutFile === '' ? undefined : createWriteStream(stdoutFile)
  const stdout = tail(child.stdout, stdoutCopy)
  child.stdout?.once('end', () => stdoutCopy?.end())
  let exited: { code: number | null; signal: NodeJS.Signals | null; atMs: number } | undefined
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal, atMs: performance.now() }
      resolve()
    }),
  )
  const service: SoakService = {
    child,
    pid,
    lastStderr: () => [...stderr],
    lastStdout: () => [...stdout],
    exit: () => exited,
    stop: async (graceMs = 10_000) => {
      if (exited !== undefined) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => {
        if (exited === undefined) child.kill('SIGKILL')
      }, graceMs)
      await exitedPromise
      clearTimeout(timer)
    },
  }
  const ready = `http://127.0.0.1:${port}/readyz`
  for (let i = 0; i < 600; i++) {
    if (exited !== undefined) throw new Error(`node ${args.join(' ')} exited with code ${exited.code} before it was ready; stderr: ${stderr.slice(-10).join('\n')}`)
    if (await fetch(ready).then((r) => r.ok, () => false)) return service
    await new Promise((r) => setTimeout(r, 100))
  }
  await service.stop(2_000)
  throw new Error(`node ${args.join(' ')} did not become ready within 60 s`)
}

/** VmRSS of a process in MB, or NaN when it is gone */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
    return kb === undefined ? Number.NaN : Number(kb) / 1024
  } catch {
    return Number.NaN
  }
}

/** least-squares slope of y over x */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length
  if (n < 2) return Number.NaN
  const mx = points.reduce((a, p) => a + p.x, 0) / n
  const my = points.reduce((a, p) => a + p.y, 0) / n
  let num = 0
  let den = 0
  for (const p of points) {
    num += (p.x - mx) * (p.y - my)
    den += (p.x - mx) ** 2
  }
  return den === 0 ? Number.NaN : num / den
}
