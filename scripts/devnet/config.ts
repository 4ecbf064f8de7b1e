/**
 * The fixed parameters of the embedded devnet: chain, clock, fee market and the accounts that
 * build it. Everything the builder does is a function of these constants, the artifacts and
 * the layout, which is what makes two builds byte-identical.
 */
import { keccak256, toBytes, type Hex } from 'viem'
import { mnemonicToAccount, privateKeyToAddress } from 'viem/accounts'

export const CHAIN_ID = 31337

/** The genesis block's timestamp (2026-01-01T00:00:00Z). Every build step happens before it. */
export const GENESIS_TIMESTAMP = 1_767_225_600n

/**
 * Build transactions run in blocks 1, 2, 3 ... of a throw-away chain, one block per transaction,
 * 12 s apart, starting one day before genesis. V2 pairs and V3 pools store block.timestamp, so
 * the clock must be fixed; the day of slack leaves room for about 7,000 build transactions.
 */
export const BUILD_START_TIMESTAMP = GENESIS_TIMESTAMP - 86_400n
export const BUILD_BLOCK_TIME = 12n

export const BLOCK_GAS_LIMIT = 30_000_000n
/** The genesis base fee: 1 gwei. (The build itself runs with base fee 0 so balances only move by value.) */
export const GENESIS_BASE_FEE = 1_000_000_000n

/** Deadline passed to routers and the position manager during the build: never expires before genesis. */
export const BUILD_DEADLINE = GENESIS_TIMESTAMP

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk'
/**
 * Dev accounts m/44'/60'/0'/0/0..63: the first ten are anvil's and hardhat's defaults; the rest
 * give flow tests and benchmarks many distinct users in one block and the service a pool of
 * searcher keys. Every one is funded alike (ETH, tokens, approvals).
 */
export const DEV_ACCOUNT_COUNT = 64
/**
 * Dev accounts reserved as searcher keys (registry devAccounts.searcherIndexes): 8, the service's
 * default searcher (DEVNET_SEARCHER_ACCOUNT_INDEX in src/node/submission.ts), then 56..63.
 * Tests and benchmarks must not use them as users: a user sharing a searcher's account would
 * share its nonce with the backruns.
 */
export const SEARCHER_ACCOUNT_INDEXES: readonly number[] = [8, 56, 57, 58, 59, 60, 61, 62, 63]
export const DEV_KEYS_WARNING = 'DEVNET ONLY - publicly known keys, never use on a real chain'

/** ETH every dev account starts with (anvil's default). */
export const DEV_ACCOUNT_ETH = 10_000n * 10n ** 18n

export interface KeyedAccount {
  address: Hex
  privateKey: Hex
}

let derived: KeyedAccount[] | undefined

/** The well-known anvil/hardhat development accounts m/44'/60'/0'/0/i of DEV_MNEMONIC. */
export function devAccounts(): KeyedAccount[] {
  // derived once per process: each derivation runs the mnemonic's 2048-round PBKDF2
  derived ??= deriveDevAccounts()
  return derived.map((a) => ({ ...a }))
}

function deriveDevAccounts(): KeyedAccount[] {
  const out: KeyedAccount[] = []
  for (let i = 0; i < DEV_ACCOUNT_COUNT; i++) {
    const account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: i })
    const key = account.getHdKey().privateKey
    if (!key) throw new Error(`no private key for dev account ${i}`)
    out.push({ address: account.address, privateKey: `0x${Buffer.from(key).toString('hex')}` })
  }
  return out
}

/**
 * A builder account whose key is keccak256 of a public label: a devnet-only key anyone can
 * recompute. Contracts that must sit at a fixed address get a deployer of their own (label
 * `fixed:<name>`), so their address is CREATE(deployer, 0) whatever else the build deploys.
 */
export function labelledAccount(label: string): KeyedAccount {
  const privateKey = keccak256(toBytes(`swap-backrun-router devnet: ${label}`))
  return { address: privateKeyToAddress(privateKey), privateKey }
}

/** Deploys the Uniswap contracts and tokens, owns the factories and every liquidity position. */
export const DEPLOYER = labelledAccount('deployer')
/** ETH the deployer starts with: enough to wrap for all WETH liquidity and the dev accounts' WETH. */
export const DEPLOYER_ETH = 1_000_000n * 10n ** 18n
