/**
 * A subset of the Ethereum state tests (ethereum/tests GeneralStateTests, Cancun; see
 * fixtures/state-tests/NOTICE.md for what was taken and why) run through the project's simulator,
 * against the tests' own filled expectations for every (data, gas, value) case:
 * - the post-state root, over the whole test world (pre-state plus what the transaction changed),
 * - the logs hash (keccak256 of the RLP of the transaction's logs),
 * - the expected exception: the transaction must be rejected exactly when the test says so, and
 *   then nothing changes (the root is the pre-state's).
 *
 * The transaction is the case's own signed encoding (`txbytes`), executed in the block the test's
 * `env` describes, as a signed transaction with every inclusion rule (nonce, funds, fees, gas).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { createTxFromRLP } from '@ethereumjs/tx'
import { describe, expect, it } from 'vitest'
import { parseGenesis, type GethGenesisJson } from '../../src/chain/memory/genesis.ts'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import { hexToBytesStrict } from '../../src/chain/quantity.ts'
import type { Hex } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { stateTestBlock, type StateTestEnv } from './state-test-block.ts'
import { logsHash, postStateRoot } from '../../src/evm/post-state.ts'
import { Simulator, TransactionRejectedError } from '../../src/evm/simulator.ts'

const ROOT = join(import.meta.dirname, '../../fixtures/state-tests')
const FORK = 'Cancun'

interface StateTestPost {
  hash: Hex
  logs: Hex
  txbytes: Hex
  indexes: { data: number; gas: number; value: number }
  expectException?: string
}

interface StateTest {
  env: StateTestEnv
  pre: GethGenesisJson['alloc']
  post: Record<string, StateTestPost[]>
}

/**
 * Cases of the subset that the project does not pass, with why. Each still runs, as a test that
 * must fail: when the cause is fixed it starts passing, the test fails, and the entry goes.
 */
const KNOWN_FAILURES: Record<string, string> = {}

/**
 * What each expected exception is rejected for, as ethereumjs words it: a rejection for another
 * reason than the test's is a failure too.
 */
const EXCEPTION_MESSAGES: Record<string, RegExp> = {
  INTRINSIC_GAS_TOO_LOW: /lower than the minimum gas limit/,
  INSUFFICIENT_ACCOUNT_FUNDS: /doesn't have enough funds/,
  GASLIMIT_PRICE_PRODUCT_OVERFLOW: /gas limit \* gasPrice cannot exceed/,
  SENDER_NOT_EOA: /address is not EOA \(EIP-3607\)/,
  INSUFFICIENT_MAX_FEE_PER_GAS: /is less than the block's baseFeePerGas/,
  PRIORITY_GREATER_THAN_MAX_FEE_PER_GAS: /maxFeePerGas cannot be less than maxPriorityFeePerGas/,
  NONCE_IS_MAX: /nonce cannot equal or exceed MAX_UINT64/,
  GAS_ALLOWANCE_EXCEEDED: /exceeds the gas left in the block/,
  INSUFFICIENT_MAX_FEE_PER_BLOB_GAS: /maxFeePerBlobGas .* is less than block blobGasPrice/,
  TYPE_3_TX_INVALID_BLOB_VERSIONED_HASH: /versioned hash does not start with KZG commitment version/,
  TYPE_3_TX_ZERO_BLOBS: /should contain at least one blob/,
  TYPE_3_TX_BLOB_COUNT_EXCEEDED: /exceed maximum blob gas per block/,
  TYPE_3_TX_CONTRACT_CREATION: /cannot be used to create contracts/,
  RLP_INVALID_VALUE: /value cannot exceed MAX_INTEGER/,
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) return jsonFiles(path)
      return name.endsWith('.json') ? [path] : []
    })
}

interface Case {
  label: string
  test: StateTest
  post: StateTestPost
}

function cases(file: string): Case[] {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, StateTest>
  const out: Case[] = []
  for (const [name, test] of Object.entries(doc)) {
    // pyspec names carry the filler path: keep the parametrisation only
    const short = name.includes('::') ? name.slice(name.indexOf('::') + 2) : name
    for (const post of test.post[FORK] ?? []) {
      const { data, gas, value } = post.indexes
      out.push({ label: `${short} d${data}g${gas}v${value}`, test, post })
    }
  }
  return out
}

const common = commonForChain(1n, 'cancun')
/**
 * The tests give transactions gas limits up to their blocks' (QuadraticComplexitySolidity_CallDataCopy:
 * 250M), far above the service's gas budget, which would refuse them: no gas cap here. The
 * wall-clock budget stays, generous, so that a case that hangs fails instead of holding the suite.
 */
const simulator = new Simulator({ common, budget: { maxGas: 2n ** 63n, maxMs: 30_000 } })
const NO_CHANGES = { accounts: new Map(), code: new Map(), storage: new Map(), cleared: new Set<never>() }

interface CaseOutcome {
  stateRoot: Hex
  logsHash: Hex
  rejected?: string
}

async function runCase(test: StateTest, post: StateTestPost): Promise<CaseOutcome> {
  const genesis = parseGenesis({ config: { chainId: 1 }, alloc: test.pre })
  const block = stateTestBlock(test.env)
  let tx
  try {
    tx = createTxFromRLP(hexToBytesStrict(post.txbytes, 'txbytes'), { common })
  } catch (err) {
    // a transaction that does not even decode (blob count, creation by a blob transaction, ...)
    return { stateRoot: postStateRoot(genesis.accounts, NO_CHANGES), logsHash: logsHash([]), rejected: `decode: ${(err as Error).message}` }
  }
  const reader = new MemoryStateReader(genesis.block, genesis.accounts)
  try {
    const result = await simulator.transaction(simulator.openState(reader, block), tx)
    return { stateRoot: postStateRoot(genesis.accounts, result.state.overlay.changesSinceReader()), logsHash: logsHash(result.logs) }
  } catch (err) {
    if (!(err instanceof TransactionRejectedError)) throw err
    return { stateRoot: postStateRoot(genesis.accounts, NO_CHANGES), logsHash: logsHash([]), rejected: err.message }
  }
}

function checkOutcome(outcome: CaseOutcome, post: StateTestPost) {
  if (post.expectException === undefined) {
    expect(outcome.rejected, 'transaction rejected').toBeUndefined()
  } else {
    expect(outcome.rejected, `expected ${post.expectException}`).toBeDefined()
    // "A|B": either rejection is right (the test's clients differ in which check comes first)
    const kinds = post.expectException.split('|').map((e) => e.replace(/^TransactionException\./, ''))
    const patterns = kinds.map((k) => EXCEPTION_MESSAGES[k]).filter((p) => p !== undefined)
    expect(patterns.length, `a message pattern for ${post.expectException}`).toBeGreaterThan(0)
    expect(patterns.some((p) => p.test(outcome.rejected as string)), `"${outcome.rejected}" is ${post.expectException}`).toBe(true)
  }
  expect(outcome.logsHash, 'logs hash').toBe(post.logs)
  expect(outcome.stateRoot, 'post-state root').toBe(post.hash)
}

const files = jsonFiles(ROOT)

describe('state tests subset', () => {
  it('holds the selected cases', () => {
    expect(files.length).toBeGreaterThan(0)
    expect(files.flatMap(cases).length).toBeGreaterThanOrEqual(100)
  })
})

describe.each(files.map((f) => [relative(ROOT, f), f] as const))('%s', (name, file) => {
  const known = KNOWN_FAILURES[name]
  if (known !== undefined) {
    it.fails.each(cases(file).map((c) => [c.label, c] as const))(`%s (known failure: ${known})`, async (_label, c) => {
      checkOutcome(await runCase(c.test, c.post), c.post)
    })
    return
  }
  it.each(cases(file).map((c) => [c.label, c] as const))('%s', async (_label, c) => {
    checkOutcome(await runCase(c.test, c.post), c.post)
  })
})
