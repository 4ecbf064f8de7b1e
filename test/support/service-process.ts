/**
 * Starts the service the way `npm start` does (the node arguments of package.json's start script),
 * as a child process on 127.0.0.1, and waits until /readyz answers. Benchmarks measure that process.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** The start script's words: `[NAME=value ...] node <args...>` */
function startScriptWords(): { env: Record<string, string>; args: string[] } {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  const words = pkg.scripts.start.trim().split(/\s+/)
  const env: Record<string, string> = {}
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=')
    env[name] = value.join('=')
  }
  if (words[0] !== 'node') throw new Error(`package.json start script does not start with node: ${pkg.scripts.start}`)
  return { env, args: words.slice(1) }
}

/** `node <args...>` of the start script */
export function startScriptNodeArgs(): string[] {
  return startScriptWords().args
}

/** the environment the start script sets before `node` (MALLOC_ARENA_MAX) */
export function startScriptEnv(): Record<string, string> {
  return startScriptWords().env
}

/** `logFd`: a file descriptor the service's log (stdout) goes to; ignored by default */
export async function startServiceProcess(port: number, env: Record<string, string> = {}, script?: string, logFd?: number): Promise<ChildProcess> {
  const base = script === undefined ? startScriptNodeArgs() : [...startScriptNodeArgs().filter((a) => !a.endsWith('.ts')), script]
  // BENCH_PROFILE_DIR: a V8 CPU profile of the service process, for finding where its time goes
  const args = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`, ...base] : base
  const child = spawn(process.execPath, args, { env: { ...process.env, ...startScriptEnv(), LOG_LEVEL: 'warn', ...env, PORT: String(port) }, stdio: ['ignore', logFd ?? 'ignore', 'inherit'] })
  const ready = script === undefined ? `http://127.0.0.1:${port}/readyz` : `http://127.0.0.1:${port}/healthz`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with code ${child.exitCode}`)
    if (await fetch(ready).then((r) => r.ok, () => false)) return child
    await new Promise((r) => setTimeout(r, 100))
  }
  child.kill('SIGKILL')
  throw new Error(`${args.join(' ')} did not become ready`)
}
