/**
 * EIP-7610 through the simulator: a contract creation (CREATE2 from a factory, or a creation
 * transaction) at an address that has storage, but no code and nonce 0, fails as a collision, in
 * devnet state (genesis, committed blocks, writes earlier in the same overlay) and on a fork, where
 * the upstream (a real HTTP server here) is asked with eth_getProof only for creation targets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getContractAddress, keccak256, pad, toHex } from 'viem'
import { createAddressFromString, KECCAK256_NULL } from '@ethereumjs/util'
import { ForkStateSource } from '../../src/chain/fork/index.ts'
import type { GenesisAccount } from '../../src/chain/memory/genesis.ts'
import { LayeredStateReader, type DevnetBlockInfo, type StateChanges } from '../../src/chain/memory/layered-state-reader.ts'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import { bytesToHexString, hexToBytesStrict } from '../../src/chain/quantity.ts'
import type { Address, BlockInfo, Hex } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { Simulator, type ExecutionResult } from '../../src/evm/simulator.ts'
import { answerEach, startFakeUpstream, type FakeUpstream, type RpcRequestItem } from '../chain/fork/fake-upstream.ts'

/** CREATE2(value 0, memory[0..1) = 0x00 (STOP) as init code, salt = calldata word 0); returns the address (0 on failure). */
const FACTORY_CODE: Hex = '0x600035600160006000f560005260206000f3'
const INIT_CODE: Hex = '0x00'
const FACTORY: Address = '0x00000000000000000000000000000000000fac70'
const CALLER: Address = '0x000000000000000000000000000000000000ca11'
const FRESH_EOA: Address = '0x000000000000000000000000000000000000f4e5'
/** SSTORE(0, 1): code that runs and writes without creating anything */
const WRITER: Address = '0x000000000000000000000000000000000000c0de'
const WRITER_CODE: Hex = '0x6001600055'

const salt = (n: number): Hex => pad(toHex(n), { size: 32 })
const target = (n: number): Address => getContractAddress({ from: FACTORY, opcode: 'CREATE2', salt: salt(n), bytecode: INIT_CODE }).toLowerCase() as Address
/** the address a creation transaction from CALLER (nonce 0) deploys at */
const CREATED_BY_TX: Address = getContractAddress({ from: CALLER, nonce: 0n }).toLowerCase() as Address
const ZERO_WORD = new Uint8Array(32)

const BLOCK: BlockInfo = { ...EMPTY_STATE_READER.block, number: 16n, hash: `0x${'11'.repeat(32)}`, timestamp: 1_700_000_000n, baseFeePerGas: 7n }

const simulator = new Simulator({ common: commonForChain(1n) })

function create2(state: ReturnType<Simulator['openState']>, n: number): Promise<ExecutionResult> {
  return simulator.call(state, { from: CALLER, to: FACTORY, data: salt(n), gasLimit: 1_000_000n })
}

/** The address the factory returned: zero when the CREATE2 failed. */
function created(result: ExecutionResult): Uint8Array {
  expect(result.status).toBe('success')
  return result.returnData
}

const word = (address: Address) => hexToBytesStrict(pad(address, { size: 32 }))

function account(fields: Partial<GenesisAccount> = {}): GenesisAccount {
  const code = fields.code ?? new Uint8Array(0)
  return {
    nonce: 0n,
    balance: 0n,
    code,
    codeHash: code.length === 0 ? KECCAK256_NULL : hexToBytesStrict(keccak256(code)),
    storage: new Map(),
    ...fields,
  }
}

describe('EIP-7610 in devnet state', () => {
  const code = hexToBytesStrict(FACTORY_CODE)
  const genesis = new Map<Address, GenesisAccount>([
    [FACTORY, account({ nonce: 1n, code, codeHash: hexToBytesStrict(keccak256(code)) })],
    [CALLER, account({ balance: 10n ** 18n })],
    // target of salt 1: storage only, as a pre-EIP-161 account left behind
    [target(1), account({ storage: new Map([[0n, 1n]]) })],
    // target of salt 3: a slot holding zero is no storage
    [target(3), account({ storage: new Map([[0n, 0n]]) })],
  ])
  const reader = new MemoryStateReader(BLOCK, genesis)

  it('CREATE2 over a storage-only account fails; to an empty address it deploys', async () => {
    expect(created(await create2(simulator.openState(reader), 1))).toEqual(ZERO_WORD)
    expect(created(await create2(simulator.openState(reader), 2))).toEqual(word(target(2)))
    expect(created(await create2(simulator.openState(reader), 3))).toEqual(word(target(3)))
  })

  it('storage written earlier in the same overlay counts', async () => {
    const state = simulator.openState(reader)
    await state.overlay.putStorage(createAddressFromString(target(2)), ZERO_WORD, Uint8Array.of(9))
    expect(created(await create2(state, 2))).toEqual(ZERO_WORD)
  })

  it('after committed blocks: storage written by a block counts, a block that cleared it does not', async () => {
    const changes = (storage: StateChanges['storage'], cleared: Address[] = []): StateChanges => ({ accounts: new Map(), code: new Map(), storage, cleared: new Set(cleared) })
    const block17: DevnetBlockInfo = { ...BLOCK, number: 17n, parentHash: BLOCK.hash }
    const next = LayeredStateReader.stack(reader, block17, changes(new Map([[target(2), new Map([[5n, 5n]])]])))
    expect(created(await create2(simulator.openState(next), 2))).toEqual(ZERO_WORD)
    const block18: DevnetBlockInfo = { ...BLOCK, number: 18n, parentHash: block17.hash }
    const cleared = LayeredStateReader.stack(next, block18, changes(new Map(), [target(1), target(2)]))
    expect(created(await create2(simulator.openState(cleared), 1))).toEqual(word(target(1)))
    expect(created(await create2(simulator.openState(cleared), 2))).toEqual(word(target(2)))
  })

  it('a creation transaction over a storage-only account fails as a collision', async () => {
    const withStorage = new Map(genesis).set(CREATED_BY_TX, account({ storage: new Map([[7n, 7n]]) }))
    const collided = await simulator.call(simulator.openState(new MemoryStateReader(BLOCK, withStorage)), { from: CALLER, data: INIT_CODE, gasLimit: 100_000n })
    expect(collided.status).not.toBe('success')
    expect(collided.gasUsed).toBe(100_000n)
    const deployed = await simulator.call(simulator.openState(reader), { from: CALLER, data: INIT_CODE, gasLimit: 100_000n })
    expect(deployed.status).toBe('success')
    expect(deployed.createdAddress).toBe(CREATED_BY_TX)
  })
})

describe('EIP-7610 on a fork: eth_getProof for creation targets only', () => {
  const EMPTY_ROOT: Hex = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'
  /** upstream accounts with storage (balance, nonce and code all zero: eth_getBalance & co. cannot tell) */
  const withStorage = new Set<Address>([target(1), CREATED_BY_TX])
  let upstream: FakeUpstream

  const header = {
    number: toHex(BLOCK.number),
    hash: BLOCK.hash,
    timestamp: toHex(BLOCK.timestamp),
    gasLimit: toHex(BLOCK.gasLimit),
    gasUsed: '0x0',
    baseFeePerGas: toHex(BLOCK.baseFeePerGas ?? 0n),
    miner: BLOCK.coinbase,
    mixHash: BLOCK.prevRandao,
    difficulty: '0x0',
  }

  function answer(item: RpcRequestItem): unknown {
    const [address] = item.params as [Address]
    switch (item.method) {
      case 'eth_chainId':
        return '0x1'
      case 'eth_getBlockByNumber':
        return header
      case 'eth_getBalance':
        return address === CALLER ? toHex(10n ** 18n) : '0x0'
      case 'eth_getTransactionCount':
        return address === FACTORY || address === WRITER ? '0x1' : '0x0'
      case 'eth_getCode':
        return address === FACTORY ? FACTORY_CODE : address === WRITER ? WRITER_CODE : '0x'
      case 'eth_getStorageAt':
        return bytesToHexString(ZERO_WORD)
      case 'eth_getProof':
        return {
          address,
          balance: '0x0',
          nonce: '0x0',
          codeHash: bytesToHexString(KECCAK256_NULL),
          // some nodes answer a zero hash for an account that does not exist
          storageHash: withStorage.has(address) ? keccak256(address) : address === target(4) ? bytesToHexString(ZERO_WORD) : EMPTY_ROOT,
          accountProof: [],
          storageProof: [],
        }
      default:
        return { error: { code: -32601, message: `method not found: ${item.method}` } }
    }
  }

  const proofs = () => upstream.items().filter((item) => item.method === 'eth_getProof')

  beforeAll(async () => {
    upstream = await startFakeUpstream(answerEach(answer))
  })
  afterAll(() => upstream?.close())

  it('CREATE2 over an upstream account with storage fails, asking eth_getProof once per target and block', async () => {
    upstream.reset()
    const source = await ForkStateSource.create({ url: upstream.url, blockNumber: BLOCK.number })
    try {
      expect(created(await create2(simulator.openState(source.latest()), 1))).toEqual(ZERO_WORD)
      expect(proofs().map((p) => p.params)).toEqual([[target(1), [], '0x10']])
      // the answer is cached for the block
      expect(created(await create2(simulator.openState(source.latest()), 1))).toEqual(ZERO_WORD)
      expect(proofs().length).toBe(1)
      // an empty target: asked once, then deployed
      expect(created(await create2(simulator.openState(source.latest()), 2))).toEqual(word(target(2)))
      expect(proofs().map((p) => p.params[0])).toEqual([target(1), target(2)])
      expect(created(await create2(simulator.openState(source.latest()), 4))).toEqual(word(target(4)))
      // a creation transaction at an address with storage
      const tx = await simulator.call(simulator.openState(source.latest()), { from: CALLER, data: INIT_CODE, gasLimit: 100_000n })
      expect(tx.status).not.toBe('success')
      expect(proofs().map((p) => p.params[0])).toEqual([target(1), target(2), target(4), CREATED_BY_TX])
    } finally {
      await source.close()
    }
  })

  it('executions that create nothing never ask for storage roots', async () => {
    upstream.reset()
    const source = await ForkStateSource.create({ url: upstream.url, blockNumber: BLOCK.number })
    try {
      const state = simulator.openState(source.latest())
      // a value transfer to an account with no nonce and no code, a call to an upstream account with storage
      expect((await simulator.call(state, { from: CALLER, to: FRESH_EOA, value: 1n })).status).toBe('success')
      expect((await simulator.call(state, { from: CALLER, to: target(1), value: 1n })).status).toBe('success')
      // code that runs and writes storage
      expect((await simulator.call(state, { from: CALLER, to: WRITER })).status).toBe('success')
      expect(upstream.items().map((item) => item.method)).toContain('eth_getStorageAt')
      expect(proofs()).toEqual([])
    } finally {
      await source.close()
    }
  })
})
