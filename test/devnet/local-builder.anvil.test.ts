/**
 * The devnet's local builder against anvil: one built block pair is replayed on anvil loaded with
 * the same genesis: same gas, same base fees, same balances, nonces and storage for everything the
 * blocks changed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import type { LayeredStateReader } from '../../src/chain/memory/layered-state-reader.ts'
import { DEVNET_BUILDER_COINBASE } from '../../src/devnet/local-builder.ts'
import { GENESIS_PATH, lower, type FixtureTx } from '../support/devnet.ts'
import { SWAP_A, SWAP_B, SWAP_C, TRANSFER, ok, hex, startBuilder, closeBuilders } from './local-builder-harness.ts'

afterEach(closeBuilders)

describe('LocalBuilder blocks against anvil (same genesis, same transactions, same order)', () => {
  let anvil: AnvilInstance
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining', '--order', 'fifo'] })
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  it('two blocks (a bundle moving one pool twice; then a bundle and a public transfer): same gas, base fees and state changes', async () => {
    const { builder, url, source } = await startBuilder()
    await anvilRpc(anvil.url, 'anvil_setCoinbase', [DEVNET_BUILDER_COINBASE])

    const blocks: Array<{ txs: FixtureTx[]; send: () => Promise<void> }> = [
      {
        txs: [SWAP_A, SWAP_B],
        send: async () => {
          await ok(url, 'eth_sendBundle', [{ txs: [SWAP_A.raw, SWAP_B.raw], blockNumber: '0x1' }])
        },
      },
      {
        txs: [SWAP_C, TRANSFER],
        send: async () => {
          await ok(url, 'eth_sendRawTransaction', [TRANSFER.raw])
          await ok(url, 'eth_sendBundle', [{ txs: [SWAP_C.raw], blockNumber: '0x2' }])
        },
      },
    ]
    for (const { txs, send } of blocks) {
      await send()
      const built = await builder.mineNow()
      const number = hex(built.block.number)
      expect(built.receipts.map((r) => r.transactionHash)).toEqual(txs.map((t) => t.hash))

      // anvil --init takes the genesis base fee as block 1's instead of deriving it (as the fixture
      // recorder notes), so block 1's is pinned to the EIP-1559 value; block 2's is anvil's own
      if (built.block.number === 1n) await anvilRpc(anvil.url, 'anvil_setNextBlockBaseFeePerGas', [hex(BigInt(SWAP_A.block.baseFeePerGas))])
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(built.block.timestamp)])
      for (const t of txs) await anvilRpc(anvil.url, 'eth_sendRawTransaction', [t.raw])
      await anvilRpc(anvil.url, 'evm_mine', [])
      const theirs = await anvilRpc<{ number: string; gasUsed: string; baseFeePerGas: string; timestamp: string; transactions: string[]; miner: string }>(anvil.url, 'eth_getBlockByNumber', [number, false])
      expect(theirs.transactions).toEqual(txs.map((t) => t.hash))
      expect(BigInt(theirs.gasUsed)).toBe(built.block.gasUsed)
      expect(BigInt(theirs.baseFeePerGas)).toBe(built.block.baseFeePerGas)
      expect(BigInt(theirs.timestamp)).toBe(built.block.timestamp)
      expect(lower(theirs.miner)).toBe(DEVNET_BUILDER_COINBASE)
      for (const r of built.receipts) {
        const their = await anvilRpc<{ gasUsed: string; status: string; cumulativeGasUsed: string; effectiveGasPrice: string }>(anvil.url, 'eth_getTransactionReceipt', [r.transactionHash])
        expect({ gas: BigInt(their.gasUsed), status: Number(their.status), cumulative: BigInt(their.cumulativeGasUsed), price: BigInt(their.effectiveGasPrice) }).toEqual({
          gas: r.gasUsed,
          status: r.status,
          cumulative: r.cumulativeGasUsed,
          price: r.effectiveGasPrice,
        })
      }

      // every account and slot the block changed reads the same on both chains, at this block
      const changes = (source.latest() as LayeredStateReader).changes
      expect(changes.accounts.size).toBeGreaterThan(0)
      expect(changes.accounts.has(DEVNET_BUILDER_COINBASE)).toBe(true)
      for (const address of changes.accounts.keys()) {
        for (const method of ['eth_getBalance', 'eth_getTransactionCount'] as const) {
          expect(`${method} ${address} ${await ok(url, method, [address, number])}`).toBe(`${method} ${address} ${await anvilRpc(anvil.url, method, [address, number])}`)
        }
      }
      let slots = 0
      for (const [address, changed] of changes.storage) {
        for (const slot of changed.keys()) {
          slots++
          const key = `0x${slot.toString(16).padStart(64, '0')}`
          expect(`${address}[${key}] ${await ok(url, 'eth_getStorageAt', [address, key, number])}`).toBe(
            `${address}[${key}] ${await anvilRpc(anvil.url, 'eth_getStorageAt', [address, key, number])}`,
          )
        }
      }
      expect(slots).toBeGreaterThan(0)
    }
    // block 2's base fee followed block 1's gas on both sides (checked above); and it moved
    expect(source.latest().block.baseFeePerGas).not.toBe(BigInt(SWAP_A.block.baseFeePerGas))
  })
})
