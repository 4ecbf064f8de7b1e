/** Where the devnet's inputs and outputs live in the repository. */
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const CONTRACTS_DIR = join(REPO_ROOT, 'src/contracts')
export const ARTIFACTS_DIR = join(CONTRACTS_DIR, 'artifacts')
export const DEVNET_DIR = join(REPO_ROOT, 'fixtures/devnet')
export const GENESIS_PATH = join(DEVNET_DIR, 'genesis.json')
export const REGISTRY_PATH = join(DEVNET_DIR, 'registry.json')
export const TX_FIXTURE_PATH = join(REPO_ROOT, 'fixtures/txs/transactions.json')
