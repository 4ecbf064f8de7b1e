/**
 * What a fork knows of a new head's changes: the keys it re-read at the head (the recent reads,
 * warmed before adoption) whose values equal the parent's. Every other key may have changed: the
 * upstream does not say what a block wrote. Workers keep exactly these of their parent's cache
 * (src/workers/remote-state-reader.ts carryFrom), so the hot state does not cross to them again.
 */
import type { Address, BlockInfo, BlockUnchangedKeys, PrefetchRequest } from '../types.ts'
import type { StateLoader } from './state-loader.ts'

/**
 * The keys of `warmed` cached at both `parent` and `head` with equal values (accounts: nonce,
 * balance, code hash and existence); undefined unless `head` is `parent`'s child.
 */
export function unchangedKeys(loader: StateLoader, parent: BlockInfo, head: BlockInfo, warmed: Required<PrefetchRequest>): BlockUnchangedKeys | undefined {
  if (head.number !== parent.number + 1n || head.parentHash === undefined || head.parentHash !== parent.hash) return undefined
  const accounts: Address[] = []
  for (const address of warmed.accounts) {
    const before = loader.cachedAccount(parent.number, address)
    const after = loader.cachedAccount(head.number, address)
    if (before === undefined || after === undefined) continue
    if (before.exists === after.exists && before.nonce === after.nonce && before.balance === after.balance && before.codeHash === after.codeHash) accounts.push(address.toLowerCase() as Address)
  }
  const storage = new Map<Address, bigint[]>()
  for (const { address, slot } of warmed.storage) {
    const before = loader.cachedStorage(parent.number, address, slot)
    if (before === undefined || before !== loader.cachedStorage(head.number, address, slot)) continue
    const lower = address.toLowerCase() as Address
    let slots = storage.get(lower)
    if (slots === undefined) storage.set(lower, (slots = []))
    slots.push(slot)
  }
  return { kind: 'unchanged', parentHash: parent.hash, accounts, storage: [...storage] }
}
