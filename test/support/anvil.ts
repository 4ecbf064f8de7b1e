/**
 * Starts a real anvil (the independent EVM we check against) on 127.0.0.1 and stops it by pid.
 * The platform binary is spawned directly: killing an `npx anvil` wrapper leaves the binary running.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

import { encodeFunctionData, parseAbi } from 'viem'

export interface AnvilOptions {
  /** go-ethereum genesis file loaded with --init */
  genesisPath?: string
  hardfork?: string
  /** mine blocks only on demand (default) or every N seconds */
  blockTime?: number
  chainId?: number
  extraArgs?: string[]
  /** ms to wait for "Listening on" */
  startTimeoutMs?: number
}

export interface AnvilInstance {
  readonly url: string
  readonly port: number
  readonly pid: number
  stop(): Promise<void>
}

export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url)
  const pkg = require.resolve('@foundry-rs/anvil-linux-amd64/package.json')
  return join(dirname(pkg), 'bin', 'anvil')
}

export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  const args = ['--host', '127.0.0.1', '--port', '0', '--hardfork', options.hardfork ?? 'prague', '--no-request-size-limit']
  if (options.genesisPath) args.push('--init', options.genesisPath)
  if (options.chainId !== undefined) args.push('--chain-id', String(options.chainId))
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime))
  args.push(...(options.extraArgs ?? []))
  const child: ChildProcess = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const pid = child.pid
  if (pid === undefined) throw new Error('anvil failed to spawn')
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`anvil did not start within ${options.startTimeoutMs ?? 15000} ms: ${out.slice(-2000)}`))
    }, options.startTimeoutMs ?? 15000)
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        child.stdout?.off('data', onData)
        // keep draining output so the pipe never blocks anvil
        child.stdout?.resume()
        resolve(Number(m[1]))
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString()
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`anvil exited with code ${code}: ${out.slice(-2000)}`))
    })
  })
  child.stderr?.resume()
  let stopped: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          resolve()
        }
      })
      return stopped
    },
  }
}

/** Minimal JSON-RPC helper for scripts and tests talking to anvil. */
export async function anvilRpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  })
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } }
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.message}`)
  return body.result as T
}

/**
 * The receipt of `hash`, waiting until anvil has mined it: `eth_sendTransaction` and
 * `eth_sendRawTransaction` may answer before the automined block exists, so a receipt read right
 * after them can be null.
 */
export async function anvilReceipt<T extends object = { status: string; blockNumber: string; gasUsed: string }>(url: string, hash: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const receipt = await anvilRpc<T | null>(url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt
    if (Date.now() > deadline) throw new Error(`anvil mined no receipt for ${hash} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** What a test reads of a receipt mined together with others. */
export interface MinedReceipt {
  status: string
  blockNumber: string
  transactionIndex: string
  gasUsed: string
}

/**
 * Mines the pending transactions `hashes` into one block (anvil started with `--no-mining`) and
 * returns their receipts, in the order given. A user's swap and its backrun go in one block this
 * way, as a bundle lands them: in a later block a V3 pool the backrun crosses would write an oracle
 * observation for the new timestamp, which the engine, simulating the user's block, leaves out.
 */
export async function mineTogether(url: string, hashes: readonly string[]): Promise<MinedReceipt[]> {
  await anvilRpc(url, 'evm_mine')
  const receipts: MinedReceipt[] = []
  for (const hash of hashes) receipts.push(await anvilReceipt<MinedReceipt>(url, hash))
  return receipts
}

const ERC20_BALANCE = parseAbi(['function balanceOf(address) view returns (uint256)'])

/** `holder`'s balance of the ERC-20 `token` on anvil's latest block (eth_call). */
export async function anvilTokenBalance(url: string, token: string, holder: string): Promise<bigint> {
  const data = encodeFunctionData({ abi: ERC20_BALANCE, functionName: 'balanceOf', args: [holder as `0x${string}`] })
  return BigInt(await anvilRpc<string>(url, 'eth_call', [{ to: token, data }, 'latest']))
}

/** EIP-1559 fees as anvil's JSON-RPC takes them: a 100 gwei cap and `tipGwei` gwei of tip (anvil orders a block by tip). */
export function anvilFees(tipGwei: bigint): { maxFeePerGas: string; maxPriorityFeePerGas: string } {
  const gwei = 10n ** 9n
  return { maxFeePerGas: `0x${(100n * gwei).toString(16)}`, maxPriorityFeePerGas: `0x${(tipGwei * gwei).toString(16)}` }
}
