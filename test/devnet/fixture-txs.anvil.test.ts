/**
 * fixtures/txs/transactions.json is what anvil does with each transaction on the current
 * genesis: re-running every one on a fresh anvil reproduces status, gas, output, logs, balance
 * changes and block context. Also guards the recorder: the definitions re-sign to the same bytes
 * and the file covers the kinds of transactions it promises.
 */
import { readFileSync } from 'node:fs'
import { keccak256, parseTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { executeAtGenesis } from '../../scripts/devnet/execute-at-genesis.ts'
import { sha256File, signFixtureTx, type TxFixtureFile } from '../../scripts/devnet/fixture-file.ts'
import { FIXTURE_TXS } from '../../scripts/devnet/fixture-txs.ts'
import { GENESIS_PATH, REGISTRY_PATH, TX_FIXTURE_PATH } from '../../scripts/devnet/paths.ts'
import { readRegistry } from '../../scripts/devnet/registry.ts'

const registry = readRegistry(REGISTRY_PATH)
const fixture = JSON.parse(readFileSync(TX_FIXTURE_PATH, 'utf8')) as TxFixtureFile
const txs = fixture.transactions

describe('fixture transactions', () => {
  it('were recorded on the current genesis', () => {
    expect(fixture.genesisSha256, 'genesis.json changed: npx tsx scripts/record-txs.ts').toBe(sha256File(GENESIS_PATH))
    expect(fixture.chainId).toBe(registry.chainId)
  })

  it('cover swaps of every router, three transaction types, reverts, arbitrage and a plain transfer', () => {
    expect(txs.length).toBeGreaterThanOrEqual(20)
    expect(new Set(txs.map((t) => t.type))).toEqual(new Set([0, 1, 2]))
    expect(txs.filter((t) => t.expected.status === 0).length).toBeGreaterThanOrEqual(3)
    expect(txs.some((t) => t.createsArbitrage)).toBe(true)
    expect(txs.some((t) => !t.createsArbitrage && t.expected.status === 1 && t.pools.length > 0)).toBe(true)
    expect(txs.some((t) => t.expected.logs.length === 0 && t.expected.status === 1 && t.gasLimit === '21000')).toBe(true)
    const routers = new Set(txs.map((t) => t.to))
    for (const r of [registry.v2.router02, registry.v3.swapRouter, registry.v3.swapRouter02]) expect(routers.has(r)).toBe(true)
  })

  it('re-sign to the recorded bytes from their definitions, with consistent fields', async () => {
    expect(txs.map((t) => t.name)).toEqual(FIXTURE_TXS.map((d) => d.name))
    for (const [i, definition] of FIXTURE_TXS.entries()) {
      const recorded = txs[i]!
      const signed = await signFixtureTx(definition, registry, recorded.nonce)
      expect(signed.raw, definition.name).toBe(recorded.raw)
      expect(keccak256(recorded.raw)).toBe(recorded.hash)
      const parsed = parseTransaction(recorded.raw)
      expect(parsed.chainId).toBe(registry.chainId)
      expect(parsed.to?.toLowerCase()).toBe(recorded.to.toLowerCase())
      expect((parsed.value ?? 0n).toString()).toBe(recorded.value)
      expect(parsed.gas?.toString()).toBe(recorded.gasLimit)
      expect({ legacy: 0, eip2930: 1, eip1559: 2 }[parsed.type as string]).toBe(recorded.type)
      expect(recorded.createsArbitrage).toBe(recorded.arbitrageAfter.edgePpm > 0)
    }
  })

  describe('on a fresh anvil', () => {
    let anvil: AnvilInstance
    beforeAll(async () => {
      anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
    })
    afterAll(async () => {
      await anvil?.stop()
    })

    it('reproduces every recorded expectation, each transaction alone in block 1', async () => {
      for (const tx of txs) {
        const seen = await executeAtGenesis(anvil.url, registry, tx.raw, { sender: tx.from, recipient: tx.recipient, pools: tx.pools })
        expect(seen.hash, tx.name).toBe(tx.hash)
        const { hash: _hash, block, arbitrage, ...expected } = seen
        expect(expected, tx.name).toEqual(tx.expected)
        expect(block, tx.name).toEqual(tx.block)
        expect(arbitrage, tx.name).toEqual(tx.arbitrageAfter)
      }
    })
  })
})
