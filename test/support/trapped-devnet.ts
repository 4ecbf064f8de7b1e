/**
 * The service on a copy of the devnet whose UNI token misbehaves on purpose, for the tests of the
 * execution budget and of hung workers: UNI's `transfer` and `transferFrom` jump to a trap (a loop,
 * a call that computes for seconds), everything else is UNI's own code, delegated to at
 * {@link UNI_IMPL}. A quote selling UNI, whose swap moves UNI, therefore runs the trap inside the
 * router's swap. Blocks hold 1e9 gas (EVM_MAX_GAS must allow it), so running out of gas takes
 * seconds and only the budget under test stops the trap.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Address, Hex } from '../../src/chain/types.ts'
import { startNode, type ServiceNode } from '../../src/node/start.ts'
import { withWorkersFromEnv } from './env.ts'
import { GENESIS_PATH, loadRegistry, lower, tokenAddress } from './devnet.ts'

/** where UNI's own code goes; UNI's address gets the trap in front of it */
export const UNI_IMPL: Address = '0x00000000000000000000000000000000000001a1'

/** a block gas limit of 1e9 */
const GAS_LIMIT = '0x3b9aca00'

const hex4 = (n: number) => n.toString(16).padStart(4, '0')

/**
 * Code for UNI's address: selector == transfer or transferFrom: JUMP to `trap(offset)`, placed at
 * `offset` (it must start with JUMPDEST, 5b); anything else: DELEGATECALL to `impl` with the
 * calldata, its return data returned (or reverted with).
 */
export function trapTokenCode(impl: Address, trap: (offset: number) => string): Hex {
  const dispatch = (target: number) =>
    '600035' + '60e01c' + // selector
    '80' + '63a9059cbb' + '14' + '61' + hex4(target) + '57' + // transfer
    '6323b872dd' + '14' + '61' + hex4(target) + '57' // transferFrom
  const delegate =
    '36' + '6000' + '6000' + '37' + // calldata to memory
    '6000' + '6000' + '36' + '6000' + '73' + impl.slice(2) + '5a' + 'f4' + // DELEGATECALL
    '3d' + '6000' + '6000' + '3e' + // return data to memory
    '3d' + '6000' + '82' // size, offset, success
  const tail = (ok: number) => '61' + hex4(ok) + '57' + 'fd' + '5b' + 'f3'
  const probe = dispatch(0) + delegate + tail(0)
  // offsets: the REVERT is followed by JUMPDEST RETURN; the trap follows them
  const ok = probe.length / 2 - 2
  const offset = probe.length / 2
  const body = trap(offset)
  if (!body.startsWith('5b')) throw new Error('the trap must start with JUMPDEST (5b)')
  return `0x${dispatch(offset)}${delegate}${tail(ok)}${body}`
}

/**
 * a trap that loops forever, hashing a KiB of memory each turn: JUMPDEST PUSH2 0x0400 PUSH1 0
 * KECCAK256 POP PUSH2 offset JUMP. 242 gas a turn for several microseconds of CPU (the hash alone
 * 6.3 us natively on this machine, 2026-11-28, busy; 5.5 us idle in WebAssembly): 1e9 gas is over
 * ten seconds, so that no likely EVM runs out of a block's gas before a wall-clock budget of a few
 * hundred ms: the bare
 * JUMPDEST PUSH JUMP (12 gas a turn) ran out of 500M gas in under 300 ms on 2026-11-28
 */
export const loopTrap = (offset: number): string => '5b' + '610400' + '6000' + '20' + '50' + '61' + hex4(offset) + '56'
/** loopTrap's turn as a contract of its own (its JUMPDEST at 0) */
export const LOOP_CODE: Hex = '0x5b61040060002050600056'

/** a trap that CALLs `target` with all the gas left, then STOPs */
export const callTrap =
  (target: Address) =>
  (): string =>
    '5b' + '6000'.repeat(5) + '73' + target.slice(2) + '5a' + 'f1' + '00'

/**
 * Code that CODECOPYs a MODEXP input (appended to the code) to memory, CALLs the 0x05 precompile
 * with all gas and STOPs: base, exponent and modulus of `bytes` bytes each (all-ones exponent, odd
 * modulus), seconds of computation inside ONE step (2,048 bytes: ~358M gas), where the
 * interpreter's budget checks cannot stop it; the time grows with the cube of `bytes`.
 */
export function modexpHang(bytes: number): Hex {
  const len = 96 + 3 * bytes
  const word = (n: number) => n.toString(16).padStart(64, '0')
  const input = word(bytes) + word(bytes) + word(bytes) + '5a'.repeat(bytes) + 'ff'.repeat(bytes) + 'ff'.repeat(bytes - 1) + 'f1'
  const prefixLength = 26
  const code =
    '61' + hex4(len) + '61' + hex4(prefixLength) + '6000' + '39' + // CODECOPY(0, input, len)
    '61' + hex4(bytes) + '6000' + '61' + hex4(len) + '6000' + '6000' + '6005' + '5a' + 'f1' + // CALL(gas, 0x05, 0, 0, len, 0, bytes)
    '00'
  if (code.length / 2 !== prefixLength) throw new Error('prefix length')
  return `0x${code}${input}`
}

export interface TrappedDevnetOptions {
  /** UNI's trap, as for {@link trapTokenCode} */
  trap: (offset: number) => string
  /** more contracts to place, by address */
  contracts?: Readonly<Record<Address, Hex>>
}

/** Writes the trapped genesis into `dir`; its path. */
export function writeTrappedGenesis(dir: string, options: TrappedDevnetOptions): string {
  const uni = tokenAddress(loadRegistry(), 'UNI')
  const genesis = JSON.parse(readFileSync(GENESIS_PATH, 'utf8')) as { gasLimit: string; alloc: Record<string, { code?: string; balance: string }> }
  const uniKey = Object.keys(genesis.alloc).find((a) => lower(a.startsWith('0x') ? a : `0x${a}`) === uni)
  if (uniKey === undefined) throw new Error('UNI is not in the devnet genesis')
  genesis.alloc[UNI_IMPL.slice(2)] = { code: genesis.alloc[uniKey]!.code, balance: '0x0' }
  genesis.alloc[uniKey] = { ...genesis.alloc[uniKey]!, code: trapTokenCode(UNI_IMPL, options.trap) }
  for (const [address, code] of Object.entries(options.contracts ?? {})) genesis.alloc[address.slice(2)] = { code, balance: '0x0' }
  genesis.gasLimit = GAS_LIMIT
  const path = join(dir, 'genesis.json')
  writeFileSync(path, JSON.stringify(genesis))
  return path
}

export interface TrappedNode {
  node: ServiceNode
  url: string
  close(): Promise<void>
}

/**
 * The service started as `npm start` starts it (startNode, in this process) on the trapped devnet:
 * budget EVM_MAX_MS = `budgetMs`, EVM_MAX_GAS 1e9, no block built while the test runs (a submission
 * stays on the head it was simulated on), every quote computed afresh (no answer cache). `env`
 * adds to or overrides that.
 */
export async function startTrappedNode(options: TrappedDevnetOptions & { budgetMs: number; env?: Record<string, string> }): Promise<TrappedNode> {
  const dir = mkdtempSync(join(tmpdir(), 'trapped-devnet-'))
  try {
    const node = await startNode(withWorkersFromEnv({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DEVNET_GENESIS: writeTrappedGenesis(dir, options),
      DATA_DIR: join(dir, 'data'),
      LOCAL_BUILDER_PORT: '0',
      LOCAL_BUILDER_BLOCK_TIME_MS: '600000',
      QUOTE_CACHE_MAX_ENTRIES: '0',
      EVM_MAX_MS: String(options.budgetMs),
      EVM_MAX_GAS: '1000000000',
      ...options.env,
    }))
    return {
      node,
      url: node.url,
      async close() {
        await node.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
}

export interface TimedResponse {
  status: number
  body: Record<string, unknown>
  /** from the request's start to the end of the body */
  ms: number
}

/** POSTs `body` as JSON; the status, the parsed body and how long it took */
export async function postTimed(url: string, body: unknown, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<TimedResponse> {
  const t0 = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) })
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, ms: performance.now() - t0 }
}
