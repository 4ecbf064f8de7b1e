/**
 * What the local builder's tests share: the fixture transactions they send, JSON-RPC over real HTTP
 * (signed with X-Flashbots-Signature when asked), and builders on the devnet genesis, started on a
 * free loopback port and closed by closeBuilders (each test file runs it after each test: a hook
 * registered here would run only for the first file of a worker that shares its modules).
 */
import { keccak256, parseAbi, toBytes, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import { LocalBuilder, type LocalBuilderOptions } from '../../src/devnet/local-builder.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { GENESIS_PATH, loadFixtureTxs, loadRegistry, type FixtureTx } from '../support/devnet.ts'

export const registry = loadRegistry()
export const fixtures = loadFixtureTxs()
export const fx = (name: string): FixtureTx => {
  const f = fixtures.find((t) => t.name === name)
  if (f === undefined) throw new Error(`fixture ${name} missing`)
  return f
}
// distinct senders, each at nonce 0 on the genesis
export const SWAP_A = fx('v2-swapExactETHForTokens-small') // account 0, V2 USDC/WETH
export const SWAP_B = fx('v2-swapExactETHForTokens-large') // account 1, same pool
export const SWAP_C = fx('v2-swapExactTokensForETH-small') // account 2, same pool
export const SWAP_D = fx('v3-exactInputSingle-small') // account 9
export const TRANSFER = fx('eth-transfer') // account 9
export const REVERTS = fx('revert-v2-amountOutMin-too-high') // account 0
export const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
export const devKey = (index: number): Hex => registry.devAccounts.accounts[index].privateKey

export interface RpcAnswer {
  status: number
  result?: unknown
  error?: { code: number; message: string; data?: string }
}

export async function rpc(url: string, method: string, params: unknown[] = [], sign?: { key: Hex; as?: Address; tamper?: boolean }): Promise<RpcAnswer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params })
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (sign !== undefined) {
    const account = privateKeyToAccount(sign.key)
    const signed = sign.tamper === true ? `${body} ` : body
    const signature = await account.signMessage({ message: keccak256(toBytes(signed)) })
    headers['X-Flashbots-Signature'] = `${sign.as ?? account.address}:${signature}`
  }
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })
  const json = (await res.json()) as { result?: unknown; error?: { code: number; message: string; data?: string } }
  return { status: res.status, ...json }
}

export async function ok<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = await rpc(url, method, params)
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`)
  return answer.result as T
}

export interface ReceiptJson {
  transactionHash: Hex
  blockNumber: string
  blockHash: Hex
  status: string
  gasUsed: string
  transactionIndex: string
  bundleHash?: string
  logs: Array<{ address: string; topics: string[]; data: string; logIndex: string }>
}

export const hex = (n: bigint | number) => `0x${n.toString(16)}`

const builders: LocalBuilder[] = []
export async function startBuilder(options: Partial<LocalBuilderOptions> = {}) {
  const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
  const simulator = new Simulator({ common: commonForChain(source.chainId) })
  const errors: unknown[] = []
  const builder = new LocalBuilder({ source, simulator, blockTimeMs: 0, onError: (e) => errors.push(e), ...options })
  builders.push(builder)
  const { url } = await builder.start({ host: '127.0.0.1', port: 0 })
  return { source, simulator, builder, url, errors }
}

/** Closes the builders startBuilder started; each test file runs it after each test. */
export async function closeBuilders(): Promise<void> {
  await Promise.all(builders.splice(0).map((b) => b.close()))
}

export async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 10))
  }
}
