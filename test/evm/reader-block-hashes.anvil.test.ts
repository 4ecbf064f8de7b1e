/**
 * BLOCKHASH answers the chain's real hashes: the contract below (compiled with the pinned solc)
 * returns block.number and blockhash(number - k) for k = 0 .. 257, then blockhash(number + 1) and
 * blockhash(2^256 - 1): the 256 blocks in range and the ones just out of it on both sides.
 *
 * Fork mode: the simulator on a fork of anvil (pinned to its head N, executing in N + 1) returns
 * exactly what anvil's own eth_call on its pending block (N + 1) returns, and those are the hashes
 * anvil's eth_getBlockByNumber reports. Devnet mode: the hashes of the blocks the devnet committed.
 */
import { decodeFunctionResult, encodeFunctionData } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { ForkStateSource } from '../../src/chain/fork/index.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { parseGenesis } from '../../src/chain/memory/genesis.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address, Hex, StateReader } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { DEFAULT_EXECUTION_BUDGET } from '../../src/evm/execution-budget.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { compileSolidity } from '../support/solidity.ts'

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract BlockHashes {
  function hashes() external view returns (uint256 number, bytes32[] memory back, bytes32 future, bytes32 far) {
    number = block.number;
    back = new bytes32[](258);
    for (uint256 k = 0; k < 258; k++) {
      if (k <= number) back[k] = blockhash(number - k);
    }
    future = blockhash(number + 1);
    far = blockhash(type(uint256).max);
  }
}`

const CONTRACT: Address = '0x00000000000000000000000000000000b10c4a54'
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'
const ZERO: Hex = `0x${'00'.repeat(32)}`
const { abi, code } = (await compileSolidity('BlockHashes.sol', SOURCE)).BlockHashes!
const data = encodeFunctionData({ abi, functionName: 'hashes' })

interface Answer {
  number: bigint
  back: readonly Hex[]
  future: Hex
  far: Hex
}

function decode(returned: Hex): Answer {
  const [number, back, future, far] = decodeFunctionResult({ abi, functionName: 'hashes', data: returned }) as readonly [bigint, readonly Hex[], Hex, Hex]
  return { number, back, future, far }
}

/**
 * On a fork the 256 BLOCKHASH reads are 256 sequential requests to anvil, within the EVM's
 * wall-clock budget (1 s by default), which a loaded test machine exceeded: what this file checks
 * is the hashes, so it gives the execution 30 s.
 */
const BUDGET = { ...DEFAULT_EXECUTION_BUDGET, maxMs: 30_000 }

async function simulate(reader: StateReader, chainId: bigint): Promise<Answer> {
  const sim = new Simulator({ common: commonForChain(chainId), budget: BUDGET })
  const result = await sim.call(sim.openState(reader), { from: VIEWER, to: CONTRACT, data })
  expect(result.status).toBe('success')
  return decode(bytesToHexString(result.returnData))
}

/** what the answer must be for a chain whose block n has hash hashOf(n), executing in `number` */
function expected(number: bigint, hashOf: (n: bigint) => Hex): Answer {
  const back = Array.from({ length: 258 }, (_, k): Hex => {
    const n = number - BigInt(k)
    return k >= 1 && k <= 256 && n >= 0n ? hashOf(n) : ZERO
  })
  return { number, back, future: ZERO, far: ZERO }
}

describe('BLOCKHASH on a fork of anvil', () => {
  let anvil: AnvilInstance
  beforeAll(async () => {
    anvil = await startAnvil()
    await anvilRpc(anvil.url, 'anvil_setCode', [CONTRACT, code])
    await anvilRpc(anvil.url, 'anvil_mine', ['0x12c'])
  })
  afterAll(() => anvil?.stop())

  it('equals anvil eth_call on its pending block, which equals its block hashes', async () => {
    const source = await ForkStateSource.create({ url: anvil.url, followHeads: false })
    try {
      const head = source.head.number
      const ours = await simulate(source.latest(), source.chainId)
      const onAnvil = decode(await anvilRpc<Hex>(anvil.url, 'eth_call', [{ from: VIEWER, to: CONTRACT, data }, 'pending']))
      expect(ours).toEqual(onAnvil)

      const hashes = new Map<bigint, Hex>()
      for (let n = head - 256n; n <= head; n++) hashes.set(n, (await anvilRpc<{ hash: Hex }>(anvil.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash)
      expect(ours).toEqual(expected(head + 1n, (n) => hashes.get(n) ?? ZERO))
      expect(ours.back[1]).not.toBe(ZERO)

      // cached: a second execution reads no block
      const reads = source.stats().callsByMethod.eth_getBlockByNumber
      expect(await simulate(source.latest(), source.chainId)).toEqual(ours)
      expect(source.stats().callsByMethod.eth_getBlockByNumber).toBe(reads)
    } finally {
      await source.close()
    }
  })

  it('a chain younger than 256 blocks: the blocks that exist, zero below the genesis', async () => {
    const young = await startAnvil()
    try {
      await anvilRpc(young.url, 'anvil_setCode', [CONTRACT, code])
      await anvilRpc(young.url, 'anvil_mine', ['0x3'])
      const source = await ForkStateSource.create({ url: young.url, followHeads: false })
      try {
        const ours = await simulate(source.latest(), source.chainId)
        expect(ours).toEqual(decode(await anvilRpc<Hex>(young.url, 'eth_call', [{ from: VIEWER, to: CONTRACT, data }, 'pending'])))
        expect(ours.number).toBe(4n)
        expect(ours.back.slice(1, 5).every((h) => h !== ZERO)).toBe(true)
        expect(ours.back.slice(5).every((h) => h === ZERO)).toBe(true)
      } finally {
        await source.close()
      }
    } finally {
      await young.stop()
    }
  })
})

describe('BLOCKHASH on the devnet', () => {
  it('answers the hashes of the blocks the devnet committed, within 256 of the executing block', async () => {
    const genesis = parseGenesis({ config: { chainId: 31337 }, alloc: { [CONTRACT]: { code, balance: '0x0' } }, gasLimit: '0x1c9c380', baseFeePerGas: '0x3b9aca00' })
    const source = new DevnetStateSource(genesis)
    const sim = new Simulator({ common: commonForChain(source.chainId), budget: BUDGET })
    const hashes = new Map<bigint, Hex>([[genesis.block.number, genesis.block.hash]])
    for (let i = 0; i < 300; i++) {
      const state = sim.openState(source.latest())
      const block = source.commitBlock(state, { ...state.block, gasUsed: 0n }).block
      hashes.set(block.number, block.hash)
    }
    const head = source.latest().block.number
    expect(head).toBe(300n)
    const ours = await simulate(source.latest(), source.chainId)
    expect(ours).toEqual(expected(head + 1n, (n) => hashes.get(n) ?? ZERO))
    expect(new Set(ours.back.slice(1, 257)).size).toBe(256)

    // a reader of an older head answers for its own place in the chain
    const young = new DevnetStateSource(genesis)
    const state = sim.openState(young.latest())
    const first = young.commitBlock(state, { ...state.block, gasUsed: 0n })
    expect(await simulate(first, young.chainId)).toEqual(expected(2n, (n) => (n === 1n ? first.block.hash : n === 0n ? genesis.block.hash : ZERO)))
  })
})
