/**
 * The fork state source against a real anvil: reads equal anvil's own answers, cold reads are
 * batched and de-duplicated, warm reads stay local, new heads are adopted with warm state while old
 * readers keep their block, and the LRU bound holds.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { keccak256, hexToBytes } from 'viem'
import { anvilReceipt, anvilRpc, startAnvil, type AnvilInstance } from '../../support/anvil.ts'
import { UpstreamError, type Address, type BlockInfo, type Hex } from '../../../src/chain/types.ts'
import { ForkStateSource, type ForkStateSourceOptions } from '../../../src/chain/fork/fork-state-source.ts'
import { answerEach, startFakeUpstream, type FakeUpstream } from './fake-upstream.ts'

const DEPLOYER: Address = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
const NOBODY: Address = '0x000000000000000000000000000000000000dead'
const SET_CODE_ADDRESS: Address = '0x00000000000000000000000000000000c0dec0de'
/**
 * Runtime: slot0 = calldata[0:32], slot1 = calldata[32:64]
 *   PUSH1 0 CALLDATALOAD PUSH1 0 SSTORE PUSH1 0x20 CALLDATALOAD PUSH1 1 SSTORE STOP
 */
const RUNTIME = '6000356000556020356001' + '5500'
/** Init: slot0 = 7, slot1 = 8, then return RUNTIME (13 bytes at offset 0x16). */
const INIT: Hex = `0x6007600055600860015560${'0d'}60${'16'}60003960${'0d'}6000f3${RUNTIME}`

let anvil: AnvilInstance
let contract: Address
const sources: ForkStateSource[] = []
const servers: FakeUpstream[] = []

async function open(options: Partial<ForkStateSourceOptions> = {}): Promise<ForkStateSource> {
  const source = await ForkStateSource.create({ url: anvil.url, followHeads: false, ...options })
  sources.push(source)
  return source
}

async function fake(...args: Parameters<typeof startFakeUpstream>): Promise<FakeUpstream> {
  const server = await startFakeUpstream(...args)
  servers.push(server)
  return server
}

function nextHead(source: ForkStateSource, timeoutMs = 5_000): Promise<BlockInfo> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no new head adopted')), timeoutMs)
    const off = source.onNewHead((block) => {
      clearTimeout(timer)
      off()
      resolve(block)
    })
  })
}

async function sendTx(to: Address | undefined, data: Hex): Promise<{ contractAddress: Address | null; blockNumber: Hex }> {
  const hash = await anvilRpc<Hex>(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, ...(to ? { to } : {}), data }])
  return anvilReceipt(anvil.url, hash)
}

const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`

beforeAll(async () => {
  anvil = await startAnvil()
  const receipt = await sendTx(undefined, INIT)
  if (!receipt.contractAddress) throw new Error('deployment failed')
  contract = receipt.contractAddress.toLowerCase() as Address
  await anvilRpc(anvil.url, 'anvil_setCode', [SET_CODE_ADDRESS, '0x60016000f3'])
  await anvilRpc(anvil.url, 'anvil_setStorageAt', [SET_CODE_ADDRESS, word(5n), word(123456789n)])
  await anvilRpc(anvil.url, 'anvil_setBalance', [SET_CODE_ADDRESS, '0xde0b6b3a7640000'])
  await anvilRpc(anvil.url, 'evm_mine')
})

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()))
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

afterAll(async () => {
  await anvil?.stop()
})

describe('reads match anvil', () => {
  it('pins to the latest block and reports its header and the chain id', async () => {
    const source = await open()
    const expected = await anvilRpc<Record<string, Hex>>(anvil.url, 'eth_getBlockByNumber', ['latest', false])
    const block = source.latest().block
    expect(source.kind).toBe('fork')
    expect(source.chainId).toBe(31337n)
    expect(block).toEqual({
      number: BigInt(expected.number!),
      hash: expected.hash,
      parentHash: expected.parentHash,
      timestamp: BigInt(expected.timestamp!),
      gasLimit: BigInt(expected.gasLimit!),
      gasUsed: BigInt(expected.gasUsed!),
      baseFeePerGas: BigInt(expected.baseFeePerGas!),
      coinbase: expected.miner,
      prevRandao: expected.mixHash,
      difficulty: BigInt(expected.difficulty!),
      excessBlobGas: BigInt(expected.excessBlobGas!),
      blobGasUsed: BigInt(expected.blobGasUsed!),
      // the hashes the header answer lists (the dispatcher's inclusion index reads them)
      transactionHashes: (expected.transactions as unknown as Hex[]).map((h) => h.toLowerCase()),
    })
  })

  it('accounts, code and storage equal anvil eth_getBalance / eth_getTransactionCount / eth_getCode / eth_getStorageAt', async () => {
    const source = await open()
    const reader = source.latest()
    const tag = `0x${reader.block.number.toString(16)}`
    for (const address of [contract, DEPLOYER, SET_CODE_ADDRESS]) {
      const [balance, nonce, code] = await Promise.all([
        anvilRpc<Hex>(anvil.url, 'eth_getBalance', [address, tag]),
        anvilRpc<Hex>(anvil.url, 'eth_getTransactionCount', [address, tag]),
        anvilRpc<Hex>(anvil.url, 'eth_getCode', [address, tag]),
      ])
      expect(await reader.getAccount(address)).toEqual({
        nonce: BigInt(nonce),
        balance: BigInt(balance),
        codeHash: hexToBytes(keccak256(code)),
      })
      expect(await reader.getCode(address)).toEqual(hexToBytes(code))
    }
    expect(await reader.getStorage(contract, 0n)).toBe(7n)
    expect(await reader.getStorage(contract, 1n)).toBe(8n)
    expect(await reader.getStorage(contract, 2n)).toBe(0n)
    expect(await reader.getStorage(SET_CODE_ADDRESS, 5n)).toBe(123456789n)
    // mixed-case addresses are the same account
    expect(await reader.getStorage(contract.toUpperCase().replace('0X', '0x') as Address, 0n)).toBe(7n)
  })

  it('an empty account is undefined, with empty code and zero storage', async () => {
    const reader = (await open()).latest()
    expect(await reader.getAccount(NOBODY)).toBeUndefined()
    expect(await reader.getCode(NOBODY)).toEqual(new Uint8Array(0))
    expect(await reader.getStorage(NOBODY, 1n)).toBe(0n)
  })

  it('a pinned block number is used for every read, never latest', async () => {
    const pinned = BigInt(await anvilRpc<Hex>(anvil.url, 'eth_blockNumber')) - 1n
    const proxy = await fake(() => ({ kind: 'forward' }), anvil.url)
    const source = await open({ url: proxy.url, blockNumber: pinned })
    const reader = source.latest()
    expect(reader.block.number).toBe(pinned)
    await Promise.all([reader.getAccount(contract), reader.getCode(DEPLOYER), reader.getStorage(contract, 1n)])
    await reader.prefetch({ accounts: [SET_CODE_ADDRESS], storage: [{ address: SET_CODE_ADDRESS, slot: 5n }] })
    const stateCalls = proxy.items().filter((item) => item.method !== 'eth_chainId')
    expect(stateCalls.length).toBeGreaterThan(5)
    for (const item of stateCalls) {
      const tag = item.method === 'eth_getBlockByNumber' ? item.params[0] : item.params[item.params.length - 1]
      expect(tag).toBe(`0x${pinned.toString(16)}`)
    }
  })
})

describe('batching, de-duplication and cache', () => {
  it('N concurrent cold reads go out as ONE HTTP request', async () => {
    const source = await open()
    const reader = source.latest()
    const before = source.stats()
    await Promise.all([
      reader.getAccount(contract),
      reader.getAccount(DEPLOYER),
      ...Array.from({ length: 10 }, (_, i) => reader.getStorage(contract, BigInt(i))),
    ])
    const after = source.stats()
    expect(after.httpRequests - before.httpRequests).toBe(1)
    expect(after.rpcCalls - before.rpcCalls).toBe(2 * 3 + 10) // balance + nonce + code per account, one per slot
  })

  it('duplicate concurrent reads make one RPC call', async () => {
    const source = await open()
    const reader = source.latest()
    const before = source.stats()
    const values = await Promise.all([
      ...Array.from({ length: 5 }, () => reader.getStorage(contract, 0n)),
      reader.getAccount(contract),
      reader.getCode(contract),
      reader.getAccount(contract),
    ])
    expect(values.slice(0, 5)).toEqual([7n, 7n, 7n, 7n, 7n])
    const after = source.stats()
    expect(after.httpRequests - before.httpRequests).toBe(1)
    expect(after.rpcCalls - before.rpcCalls).toBe(1 + 3)
  })

  it('repeated reads make no upstream call', async () => {
    const source = await open()
    const reader = source.latest()
    await Promise.all([reader.getAccount(contract), reader.getCode(contract), reader.getStorage(contract, 0n)])
    const before = source.stats()
    for (let i = 0; i < 3; i++) {
      expect(await reader.getStorage(contract, 0n)).toBe(7n)
      expect((await reader.getAccount(contract))?.nonce).toBe(1n)
      expect((await reader.getCode(contract)).length).toBe(13)
    }
    const after = source.stats()
    expect(after.httpRequests).toBe(before.httpRequests)
    expect(after.rpcCalls).toBe(before.rpcCalls)
    expect(after.cacheHits - before.cacheHits).toBe(9)
    expect(after.cacheMisses).toBe(before.cacheMisses)
  })

  it('prefetch issues every missing read in one batch, then reads are cache hits', async () => {
    const source = await open()
    const reader = source.latest()
    const before = source.stats()
    await reader.prefetch({
      accounts: [contract, DEPLOYER, SET_CODE_ADDRESS],
      storage: [0n, 1n, 2n].map((slot) => ({ address: contract, slot })),
    })
    const mid = source.stats()
    expect(mid.httpRequests - before.httpRequests).toBe(1)
    expect(mid.rpcCalls - before.rpcCalls).toBe(3 * 3 + 3)
    expect(await reader.getStorage(contract, 1n)).toBe(8n)
    expect((await reader.getCode(SET_CODE_ADDRESS)).length).toBe(5)
    await reader.prefetch({ accounts: [contract], storage: [{ address: contract, slot: 0n }] })
    const after = source.stats()
    expect(after.httpRequests).toBe(mid.httpRequests)
    expect(after.cacheHits - mid.cacheHits).toBe(2)
  })

  it('the LRU never holds more entries than configured', async () => {
    const source = await open({ cache: { maxEntries: 8 } })
    const reader = source.latest()
    for (let slot = 0n; slot < 30n; slot++) {
      await reader.getStorage(contract, slot)
      expect(source.stats().stateEntries).toBeLessThanOrEqual(8)
    }
    await reader.getAccount(contract)
    expect(source.stats().stateEntries).toBe(8)
    // slot 0 was evicted: reading it again goes upstream, and still answers right
    const before = source.stats().rpcCalls
    expect(await reader.getStorage(contract, 0n)).toBe(7n)
    expect(source.stats().rpcCalls - before).toBe(1)
  })
})

describe('following heads', () => {
  it('adopts a mined block: the new reader sees the new slot, the old reader the old one, code is not re-fetched', async () => {
    const source = await open({ followHeads: true, pollIntervalMs: 50 })
    const old = source.latest()
    expect(await old.getStorage(contract, 0n)).toBe(7n)
    expect(await old.getCode(contract)).toHaveLength(13)
    const codeCalls = source.stats().callsByMethod.eth_getCode

    const adopted = nextHead(source)
    await anvilRpc(anvil.url, 'anvil_setStorageAt', [contract, word(0n), word(99n)])
    await anvilRpc(anvil.url, 'evm_mine')
    const block = await adopted
    expect(block.number).toBe(old.block.number + 1n)
    expect(source.latest().block).toEqual(block)
    expect(source.stats().headsAdopted).toBe(1)

    // the recently read slot and account were re-fetched before adoption: no upstream call now
    const warm = source.stats()
    const fresh = source.latest()
    expect(await fresh.getStorage(contract, 0n)).toBe(99n)
    expect((await fresh.getAccount(contract))?.nonce).toBe(1n)
    expect(await fresh.getCode(contract)).toHaveLength(13)
    expect(source.stats().rpcCalls).toBe(warm.rpcCalls)
    expect(source.stats().callsByMethod.eth_getCode).toBe(codeCalls)

    expect(await old.getStorage(contract, 0n)).toBe(7n)
    expect(old.block.number).toBe(block.number - 1n)
  })

  it('an old reader reads uncached keys at its own block after the chain moved on', async () => {
    const source = await open()
    const old = source.latest()
    const receipt = await sendTx(contract, `0x${(111n).toString(16).padStart(64, '0')}${(222n).toString(16).padStart(64, '0')}`)
    const minedAt = BigInt(receipt.blockNumber)
    await source.advanceTo(minedAt)
    const fresh = source.latest()
    expect(fresh.block.number).toBe(minedAt)
    const [oldSlot0, oldSlot1, newSlot0, newSlot1] = await Promise.all([
      old.getStorage(contract, 0n),
      old.getStorage(contract, 1n),
      fresh.getStorage(contract, 0n),
      fresh.getStorage(contract, 1n),
    ])
    expect([newSlot0, newSlot1]).toEqual([111n, 222n])
    expect(oldSlot1).toBe(8n)
    expect(oldSlot0).toBe(BigInt(await anvilRpc<Hex>(anvil.url, 'eth_getStorageAt', [contract, '0x0', `0x${old.block.number.toString(16)}`])))
    // the deployer's nonce moved with the transaction
    expect((await fresh.getAccount(DEPLOYER))!.nonce).toBe((await old.getAccount(DEPLOYER))!.nonce + 1n)
  })

  it("a child head's stateDiff names the re-read keys that kept their values, not the one that changed", async () => {
    const source = await open()
    const reader = source.latest()
    await reader.prefetch({ accounts: [contract, SET_CODE_ADDRESS], storage: [0n, 1n].map((slot) => ({ address: contract, slot })) })
    const slot0 = await reader.getStorage(contract, 0n)
    await anvilRpc(anvil.url, 'anvil_setStorageAt', [contract, word(0n), word(slot0 + 1n)])
    await anvilRpc(anvil.url, 'evm_mine')
    await source.advanceTo(reader.block.number + 1n)
    const head = source.latest()
    expect(await head.getStorage(contract, 0n)).toBe(slot0 + 1n)
    const diff = head.stateDiff?.()
    expect(diff?.kind).toBe('unchanged')
    expect(diff?.parentHash).toBe(reader.block.hash)
    expect([...(diff?.accounts ?? [])].sort()).toEqual([contract, SET_CODE_ADDRESS].sort())
    // slot 0 changed: only slot 1 is vouched for
    expect(diff?.storage).toEqual([[contract, [1n]]])
    // the reader the source started on has no parent it knows
    expect(reader.stateDiff?.()).toBeUndefined()
    // a head two blocks on is no child of the one before: nothing is vouched for
    await anvilRpc(anvil.url, 'evm_mine')
    await anvilRpc(anvil.url, 'evm_mine')
    await source.advanceTo(head.block.number + 2n)
    expect(source.latest().stateDiff?.()).toBeUndefined()
  })

  it('advanceTo re-fetches the recently read keys in one batch and keeps code', async () => {
    const source = await open()
    const reader = source.latest()
    await reader.prefetch({ accounts: [contract, DEPLOYER], storage: [0n, 1n, 2n, 3n].map((slot) => ({ address: contract, slot })) })
    await anvilRpc(anvil.url, 'evm_mine')
    const before = source.stats()
    await source.advanceTo(reader.block.number + 1n)
    const after = source.stats()
    expect(after.httpRequests - before.httpRequests).toBe(2) // header, then one warm-up batch
    // contract: balance + nonce (code known); deployer: balance + nonce + code (an EOA may gain code); 4 slots
    expect(after.rpcCalls - before.rpcCalls).toBe(1 + 2 + 3 + 4)
    expect(after.warmedKeys - before.warmedKeys).toBe(6)
    const fresh = source.latest()
    await Promise.all([fresh.getAccount(contract), fresh.getCode(contract), fresh.getStorage(contract, 3n)])
    expect(source.stats().rpcCalls).toBe(after.rpcCalls)
  })

  it('keeps the state of the newest cache.maxBlocks heads only: an older block\'s reads are dropped as the chain moves on', async () => {
    const source = await open({ cache: { maxBlocks: 2 } })
    const first = source.latest()
    await first.prefetch({ accounts: [contract], storage: [0n, 1n].map((slot) => ({ address: contract, slot })) })
    const held = source.stats().stateEntries
    expect(held).toBeGreaterThan(0)
    for (let i = 1n; i <= 3n; i++) {
      await anvilRpc(anvil.url, 'evm_mine')
      // each adoption re-reads the recent keys at the new head (the warm-up): one block's entries more
      await source.advanceTo(first.block.number + i)
    }
    const stats = source.stats()
    // blocks first+2 and first+3 kept; first and first+1 dropped
    expect(stats.oldBlockDroppedEntries).toBe(2 * held)
    expect(stats.stateEntries).toBe(2 * held)
    // the old reader still answers for its block, from the upstream again
    const before = source.stats().rpcCalls
    expect(await first.getStorage(contract, 0n)).toBe(await source.latest().getStorage(contract, 0n))
    expect(source.stats().rpcCalls).toBeGreaterThan(before)
  })

  it('an address that gains code, and an EIP-7702 delegation that changes, are seen at the new head', async () => {
    const fresh: Address = '0x00000000000000000000000000000000000f7e57'
    const delegated: Address = '0x0000000000000000000000000000000000077020'
    const designator = (target: string): Hex => `0xef0100${target.padStart(40, '0')}`
    await anvilRpc(anvil.url, 'anvil_setCode', [delegated, designator('aa')])
    await anvilRpc(anvil.url, 'evm_mine')
    const source = await open()
    const old = source.latest()
    expect(await old.getCode(fresh)).toEqual(new Uint8Array(0))
    expect(await old.getCode(delegated)).toEqual(hexToBytes(designator('aa')))

    await anvilRpc(anvil.url, 'anvil_setCode', [fresh, '0x600260005260206000f3'])
    await anvilRpc(anvil.url, 'anvil_setCode', [delegated, designator('bb')])
    await anvilRpc(anvil.url, 'evm_mine')
    await source.advanceTo(old.block.number + 1n)
    const reader = source.latest()
    expect(await reader.getCode(fresh)).toEqual(hexToBytes('0x600260005260206000f3'))
    expect((await reader.getAccount(fresh))?.codeHash).toEqual(hexToBytes(keccak256('0x600260005260206000f3')))
    expect(await reader.getCode(delegated)).toEqual(hexToBytes(designator('bb')))
    expect(await old.getCode(fresh)).toEqual(new Uint8Array(0))
  })

  it('onNewHead returns an unsubscribe function; close() stops polling', async () => {
    const proxy = await fake(() => ({ kind: 'forward' }), anvil.url)
    const source = await open({ url: proxy.url, followHeads: true, pollIntervalMs: 20 })
    const seen: bigint[] = []
    const off = source.onNewHead((block) => seen.push(block.number))
    const adopted = nextHead(source)
    await anvilRpc(anvil.url, 'evm_mine')
    await adopted
    off()
    const adopted2 = nextHead(source)
    await anvilRpc(anvil.url, 'evm_mine')
    await adopted2
    expect(seen).toHaveLength(1)
    await source.close()
    const count = proxy.requests.length
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(proxy.requests.length).toBe(count)
    expect(await source.ready()).toBe(false)
  })
})

describe('readiness and upstream failures', () => {
  it('ready() is true when anvil answers eth_blockNumber', async () => {
    expect(await (await open()).ready()).toBe(true)
  })

  it('ready() is false, within the timeout, when the upstream stops answering', async () => {
    const header = await anvilRpc<unknown>(anvil.url, 'eth_getBlockByNumber', ['latest', false])
    const server = await fake(answerEach((item) => (item.method === 'eth_chainId' ? '0x1' : header)))
    const source = await open({ url: server.url, timeoutMs: 200 })
    server.setHandler(() => ({ kind: 'hang' }))
    const started = performance.now()
    expect(await source.ready()).toBe(false)
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(server.requests.length).toBe(2) // create (one batch) + one probe, no retries
  })

  it('reader reads surface JSON-RPC errors and malformed results as UpstreamError', async () => {
    const header = await anvilRpc<unknown>(anvil.url, 'eth_getBlockByNumber', ['latest', false])
    const server = await fake(
      answerEach((item) => {
        switch (item.method) {
          case 'eth_chainId':
            return '0x1'
          case 'eth_getBlockByNumber':
            return header
          case 'eth_getStorageAt':
            return { error: { code: -32000, message: 'missing trie node' } }
          case 'eth_getBalance':
            return 'not hex'
          default:
            return '0x0'
        }
      }),
    )
    const reader = (await open({ url: server.url })).latest()
    const storage = await reader.getStorage(contract, 0n).catch((e: unknown) => e)
    expect(storage).toBeInstanceOf(UpstreamError)
    expect(storage).toMatchObject({ reason: 'rpc', details: { method: 'eth_getStorageAt', rpcCode: -32000 } })
    const account = await reader.getAccount(contract).catch((e: unknown) => e)
    expect(account).toBeInstanceOf(UpstreamError)
    expect(account).toMatchObject({ reason: 'malformed', details: { method: 'eth_getBalance' } })
    // failures are not cached: the next read asks again
    const before = server.items().length
    await reader.getStorage(contract, 0n).catch(() => undefined)
    expect(server.items().length).toBe(before + 1)
  })

  it('create() fails with UpstreamError on HTTP 500 (after bounded retries) and on garbage', async () => {
    const server = await fake(() => ({ kind: 'raw', status: 500, body: 'down' }))
    const failed = await ForkStateSource.create({ url: server.url, maxRetries: 1, retryBaseDelayMs: 5 }).catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(UpstreamError)
    expect(failed).toMatchObject({ reason: 'http', details: { status: 500 } })
    expect(server.requests).toHaveLength(2)
    server.setHandler(() => ({ kind: 'raw', body: 'garbage' }))
    const garbage = await ForkStateSource.create({ url: server.url }).catch((e: unknown) => e)
    expect(garbage).toMatchObject({ reason: 'malformed' })
  })
})
