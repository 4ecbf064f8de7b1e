/**
 * Records fixtures/txs/transactions.json:
 *
 *   npx tsx scripts/record-txs.ts
 *
 * (re-run after `npm run build:devnet` changes the genesis). Signs every transaction of
 * scripts/devnet/fixture-txs.ts with its dev account's key, executes each one alone on top of the
 * devnet genesis on a real anvil (snapshot, block 1 at genesis + 12 s, mine, observe, revert) and
 * writes what anvil did: status, gasUsed, logs, balance changes, and the block context. The
 * output is deterministic: re-running gives the same file.
 *
 * It refuses to write when a transaction does not do what its definition claims (reverts when it
 * should succeed or the other way round, or creates an arbitrage when flagged not to).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Hex } from 'viem'
import { anvilBinaryPath, anvilRpc, startAnvil } from '../test/support/anvil.ts'
import { bestCycle, readPoolPrices } from './devnet/arbitrage.ts'
import { executeAtGenesis } from './devnet/execute-at-genesis.ts'
import { sha256File, signFixtureTx, typeNumber, type RecordedTx, type TxFixtureFile } from './devnet/fixture-file.ts'
import { FIXTURE_TXS } from './devnet/fixture-txs.ts'
import { GENESIS_PATH, REGISTRY_PATH, TX_FIXTURE_PATH } from './devnet/paths.ts'
import { readRegistry } from './devnet/registry.ts'

/** "1.7.1 (4072e48705af...)" from `anvil --version`. */
function anvilVersion(): string {
  const out = execFileSync(anvilBinaryPath(), ['--version'], { encoding: 'utf8' })
  const version = /Version:\s*(\S+)/.exec(out)?.[1]
  const commit = /Commit SHA:\s*(\S+)/.exec(out)?.[1]
  if (!version) throw new Error(`cannot parse anvil --version: ${out}`)
  return commit ? `${version} (${commit})` : version
}

async function record(): Promise<TxFixtureFile> {
  const registry = readRegistry(REGISTRY_PATH)
  const anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
  try {
    const genesisArbitrage = bestCycle(await readPoolPrices(anvil.url, registry, '0x0'))
    if (genesisArbitrage.edgePpm >= 0) throw new Error(`the genesis has an arbitrage: ${JSON.stringify(genesisArbitrage)}`)

    const problems: string[] = []
    const transactions: RecordedTx[] = []
    for (const definition of FIXTURE_TXS) {
      const sender = registry.devAccounts.accounts[definition.sender]!.address
      const nonce = Number(BigInt(await anvilRpc<Hex>(anvil.url, 'eth_getTransactionCount', [sender, '0x0'])))
      const tx = await signFixtureTx(definition, registry, nonce)
      const seen = await executeAtGenesis(anvil.url, registry, tx.raw, { sender: tx.from, recipient: tx.recipient, pools: tx.pools })
      if (seen.hash !== tx.hash) problems.push(`${definition.name}: anvil hash ${seen.hash} != ${tx.hash}`)
      const reverted = seen.status === 0
      if (reverted !== (definition.expectRevert ?? false)) problems.push(`${definition.name}: status ${seen.status}`)
      const arbitrage = seen.arbitrage.edgePpm > 0
      if (arbitrage !== definition.createsArbitrage) {
        problems.push(`${definition.name}: flagged createsArbitrage ${definition.createsArbitrage}, best cycle after it ${JSON.stringify(seen.arbitrage)}`)
      }
      console.log(
        `${definition.name.padEnd(48)} type ${typeNumber(definition.type)} status ${seen.status} gas ${seen.gasUsed.padStart(7)} edge ${String(seen.arbitrage.edgePpm).padStart(7)} ppm ${seen.revertReason ?? ''}`,
      )
      transactions.push({
        name: definition.name,
        description: definition.description,
        raw: tx.raw,
        hash: tx.hash,
        from: tx.from,
        to: tx.to,
        value: tx.value.toString(),
        nonce: tx.nonce,
        gasLimit: tx.gas.toString(),
        type: typeNumber(definition.type),
        typeName: definition.type,
        createsArbitrage: definition.createsArbitrage,
        recipient: tx.recipient,
        pools: tx.pools,
        expected: {
          status: seen.status,
          gasUsed: seen.gasUsed,
          output: seen.output,
          ...(seen.revertReason === undefined ? {} : { revertReason: seen.revertReason }),
          logs: seen.logs,
          balanceChanges: seen.balanceChanges,
        },
        arbitrageAfter: seen.arbitrage,
        block: seen.block,
      })
    }
    if (problems.length > 0) throw new Error(`not recorded:\n  ${problems.join('\n  ')}`)

    return {
      about:
        'Signed user transactions on the devnet, each executed alone on top of fixtures/devnet/genesis.json by anvil in block 1 ' +
        '(snapshot, timestamp genesis + 12, mine, observe, revert). balanceChanges are block 1 minus block 0. ' +
        'Re-record with: npx tsx scripts/record-txs.ts',
      recordedWith: { anvil: anvilVersion(), hardfork: 'prague' },
      chainId: registry.chainId,
      genesisSha256: sha256File(GENESIS_PATH),
      genesisArbitrage,
      block: transactions[0]!.block,
      transactions,
    }
  } finally {
    await anvil.stop()
  }
}

const fixture = await record()
mkdirSync(dirname(TX_FIXTURE_PATH), { recursive: true })
writeFileSync(TX_FIXTURE_PATH, JSON.stringify(fixture, null, 2) + '\n')
console.log(`wrote ${fixture.transactions.length} transactions to ${TX_FIXTURE_PATH}`)
