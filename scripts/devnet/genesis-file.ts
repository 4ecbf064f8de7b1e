/**
 * Writes the built state as a go-ethereum genesis file (the format anvil --init and our own
 * parser read). Every fork is active from block 0 / time 0, so the chain runs prague rules.
 */
import type { DumpedAccount } from './build-chain.ts'
import { BLOCK_GAS_LIMIT, CHAIN_ID, GENESIS_BASE_FEE, GENESIS_TIMESTAMP } from './config.ts'

const ZERO_32 = `0x${'00'.repeat(32)}`

const quantity = (v: bigint) => `0x${v.toString(16)}`
const word = (v: bigint) => `0x${v.toString(16).padStart(64, '0')}`

export interface GenesisAllocEntry {
  balance: string
  nonce: string
  code?: string
  storage?: Record<string, string>
}

export function genesisConfig() {
  return {
    chainId: CHAIN_ID,
    homesteadBlock: 0,
    eip150Block: 0,
    eip155Block: 0,
    eip158Block: 0,
    byzantiumBlock: 0,
    constantinopleBlock: 0,
    petersburgBlock: 0,
    istanbulBlock: 0,
    muirGlacierBlock: 0,
    berlinBlock: 0,
    londonBlock: 0,
    arrowGlacierBlock: 0,
    grayGlacierBlock: 0,
    mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0,
    terminalTotalDifficultyPassed: true,
    shanghaiTime: 0,
    cancunTime: 0,
    pragueTime: 0,
    // EIP-7840: blob parameters per fork, as geth requires from cancun on (the mainnet values)
    blobSchedule: {
      cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 },
      prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 },
    },
  }
}

/** The genesis JSON, accounts and slots sorted so the text is a function of the state alone. */
export function genesisJson(accounts: Map<string, DumpedAccount>) {
  const alloc: Record<string, GenesisAllocEntry> = {}
  for (const address of [...accounts.keys()].sort()) {
    const a = accounts.get(address)!
    const entry: GenesisAllocEntry = { balance: quantity(a.balance), nonce: quantity(a.nonce) }
    if (a.code !== '0x') entry.code = a.code
    if (a.storage.size > 0) {
      const storage: Record<string, string> = {}
      for (const slot of [...a.storage.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))) storage[word(slot)] = word(a.storage.get(slot)!)
      entry.storage = storage
    }
    alloc[address] = entry
  }
  return {
    config: genesisConfig(),
    nonce: '0x0',
    timestamp: quantity(GENESIS_TIMESTAMP),
    extraData: '0x',
    gasLimit: quantity(BLOCK_GAS_LIMIT),
    difficulty: '0x0',
    mixHash: ZERO_32,
    coinbase: '0x0000000000000000000000000000000000000000',
    number: '0x0',
    gasUsed: '0x0',
    parentHash: ZERO_32,
    baseFeePerGas: quantity(GENESIS_BASE_FEE),
    excessBlobGas: '0x0',
    blobGasUsed: '0x0',
    alloc,
  }
}
