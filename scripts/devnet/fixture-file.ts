/**
 * fixtures/txs/transactions.json: signed user transactions with what anvil did with each one,
 * executed alone on top of the devnet genesis in block 1. The signing and the file layout live
 * here so the recorder and the tests agree on them.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { keccak256, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { ArbitrageCycle } from './arbitrage.ts'
import type { BalanceChange, BlockContext, RecordedLog } from './execute-at-genesis.ts'
import { FEES, buildContext, type FixtureTxDefinition, type TxTypeName } from './fixture-txs.ts'
import type { DevnetRegistry } from './registry.ts'

export interface RecordedTx {
  name: string
  description: string
  raw: Hex
  hash: Hex
  from: Hex
  to: Hex
  /** wei, decimal */
  value: string
  nonce: number
  gasLimit: string
  /** EIP-2718 type: 0 legacy (EIP-155), 1 EIP-2930, 2 EIP-1559 */
  type: 0 | 1 | 2
  typeName: TxTypeName
  createsArbitrage: boolean
  recipient: Hex
  /** pools the transaction routes through */
  pools: Hex[]
  expected: {
    status: 0 | 1
    gasUsed: string
    /** the top call's return data, or its revert data */
    output: Hex
    revertReason?: string
    logs: RecordedLog[]
    balanceChanges: BalanceChange[]
  }
  /** the best cycle of pools after the transaction (edgePpm > 0: an arbitrage exists) */
  arbitrageAfter: ArbitrageCycle
  block: BlockContext
}

export interface TxFixtureFile {
  about: string
  recordedWith: { anvil: string; hardfork: 'prague' }
  chainId: number
  /** sha256 of fixtures/devnet/genesis.json the transactions were recorded on */
  genesisSha256: string
  /** the best cycle of pools at genesis: negative, the genesis has no arbitrage */
  genesisArbitrage: ArbitrageCycle
  /** block 1 as anvil mined it (the same for every transaction) */
  block: BlockContext
  transactions: RecordedTx[]
}

const TYPE_NUMBER: Record<TxTypeName, 0 | 1 | 2> = { legacy: 0, eip2930: 1, eip1559: 2 }

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

export interface SignedFixtureTx {
  definition: FixtureTxDefinition
  raw: Hex
  hash: Hex
  from: Hex
  to: Hex
  value: bigint
  nonce: number
  gas: bigint
  recipient: Hex
  pools: Hex[]
}

/** Signs a definition with its dev account's key (RFC 6979: the same bytes every time). */
export async function signFixtureTx(definition: FixtureTxDefinition, registry: DevnetRegistry, nonce = 0): Promise<SignedFixtureTx> {
  const ctx = buildContext(registry)
  const call = definition.build(ctx)
  const key = registry.devAccounts.accounts[definition.sender]?.privateKey
  if (!key) throw new Error(`${definition.name}: no dev account ${definition.sender}`)
  const account = privateKeyToAccount(key)
  const common = { chainId: registry.chainId, nonce, gas: call.gas, to: call.to, value: call.value, data: call.data }
  let raw: Hex
  switch (definition.type) {
    case 'legacy':
      raw = await account.signTransaction({ ...common, type: 'legacy', ...FEES.legacy })
      break
    case 'eip2930':
      raw = await account.signTransaction({ ...common, type: 'eip2930', accessList: call.accessList ?? [], ...FEES.eip2930 })
      break
    case 'eip1559':
      raw = await account.signTransaction({ ...common, type: 'eip1559', accessList: call.accessList, ...FEES.eip1559 })
      break
  }
  return { definition, raw, hash: keccak256(raw), from: account.address, to: call.to, value: call.value, nonce, gas: call.gas, recipient: call.recipient, pools: call.pools }
}

export function typeNumber(name: TxTypeName): 0 | 1 | 2 {
  return TYPE_NUMBER[name]
}
