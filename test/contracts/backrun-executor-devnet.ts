/**
 * The devnet as the BackrunExecutor tests read it: the registry, the recorded fixture transactions,
 * and the executor's address and beneficiary (registry.backrun).
 */
import { readFileSync } from 'node:fs'
import type { TxFixtureFile } from '../../scripts/devnet/fixture-file.ts'
import { backrunEntry } from '../../scripts/devnet/fixed-deployments.ts'
import { REGISTRY_PATH, TX_FIXTURE_PATH } from '../../scripts/devnet/paths.ts'
import { readRegistry } from '../../scripts/devnet/registry.ts'
import type { Address } from '../../src/chain/types.ts'

export const registry = readRegistry(REGISTRY_PATH)
export const fixtures = (JSON.parse(readFileSync(TX_FIXTURE_PATH, 'utf8')) as TxFixtureFile).transactions
const entry = backrunEntry(registry)
if (!entry) throw new Error('the devnet registry has no backrun entry: run npm run build:devnet')
export const EXECUTOR = entry.executor.toLowerCase() as Address
export const BENEFICIARY = entry.beneficiary.toLowerCase() as Address
