/**
 * What a block header commits to after a transaction, computed from an execution's result so it can
 * be compared with go-ethereum, anvil and the Ethereum state tests: the logs hash (keccak256 of the
 * RLP of the logs list, as the state tests' `logs` field) and the state root (the Merkle-Patricia
 * root of every account after the transaction).
 *
 * The state root is computed over the whole world of a replayed prestate (a genesis alloc plus what
 * the execution changed), never over a fork's upstream: the overlay only knows what it read.
 * The trie root is built directly from the sorted hashed keys (no trie database): the cost is a
 * sort and one RLP encoding per node.
 */
import { RLP } from '@ethereumjs/rlp'
import { KECCAK256_NULL, bigIntToUnpaddedBytes, setLengthLeft, bigIntToBytes } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import type { GenesisAccount } from '../chain/memory/genesis.ts'
import { bytesToHexString, hexToBytesStrict } from '../chain/quantity.ts'
import type { Address, Hex } from '../chain/types.ts'
import type { StateDiff } from './journaled-state.ts'
import type { SimulationLog } from './simulator.ts'

/** keccak256(rlp([[address, [topic, ...], data], ...])): the state tests' `logs` hash. */
export function logsHash(logs: readonly SimulationLog[]): Hex {
  const list = logs.map((l) => [hexToBytesStrict(l.address), l.topics.map((t) => hexToBytesStrict(t)), hexToBytesStrict(l.data)])
  return bytesToHexString(keccak_256(RLP.encode(list)))
}

/** An account after execution, in the form the state trie commits to. */
export interface PostAccount {
  nonce: bigint
  balance: bigint
  codeHash: Uint8Array
  /** non-zero slots only */
  storage: ReadonlyMap<bigint, bigint>
}

/**
 * Every account after an execution: the accounts of `pre` with `diff` (JournaledState
 * `changesSinceReader()`) applied. A deleted account (selfdestruct, EIP-161 cleanup) is absent; a
 * cleared account keeps only the slots written after the clear; zero slots are dropped.
 */
export function postAccounts(pre: ReadonlyMap<Address, GenesisAccount>, diff: StateDiff): Map<Address, PostAccount> {
  const out = new Map<Address, PostAccount>()
  const addresses = new Set<Address>([...pre.keys(), ...diff.accounts.keys(), ...diff.storage.keys(), ...diff.cleared])
  for (const address of addresses) {
    const before = pre.get(address)
    const written = diff.accounts.get(address)
    if (written === null) continue
    const info = written ?? before
    if (info === undefined) continue
    const storage = new Map<bigint, bigint>()
    if (!diff.cleared.has(address)) for (const [slot, value] of before?.storage ?? []) storage.set(slot, value)
    for (const [slot, value] of diff.storage.get(address) ?? []) storage.set(slot, value)
    for (const [slot, value] of storage) if (value === 0n) storage.delete(slot)
    out.set(address, { nonce: info.nonce, balance: info.balance, codeHash: info.codeHash, storage })
  }
  return out
}

/** The state root of a set of accounts (secure trie: keys are keccak256 of address and slot). */
export function stateRoot(accounts: ReadonlyMap<Address, PostAccount>): Hex {
  const entries: Array<[Uint8Array, Uint8Array]> = []
  for (const [address, account] of accounts) {
    const storageEntries: Array<[Uint8Array, Uint8Array]> = []
    for (const [slot, value] of account.storage) {
      if (value === 0n) continue
      storageEntries.push([keccak_256(setLengthLeft(bigIntToBytes(slot), 32)), RLP.encode(bigIntToUnpaddedBytes(value))])
    }
    const body = RLP.encode([
      bigIntToUnpaddedBytes(account.nonce),
      bigIntToUnpaddedBytes(account.balance),
      trieRoot(storageEntries),
      account.codeHash.length === 0 ? KECCAK256_NULL : account.codeHash,
    ])
    entries.push([keccak_256(hexToBytesStrict(address)), body])
  }
  return bytesToHexString(trieRoot(entries))
}

/** The state root after an execution over `pre` (see postAccounts). */
export function postStateRoot(pre: ReadonlyMap<Address, GenesisAccount>, diff: StateDiff): Hex {
  return stateRoot(postAccounts(pre, diff))
}

type TrieNode = Uint8Array | TrieNode[]

/**
 * The Merkle-Patricia root of key/value pairs (keys of equal length, values already RLP-encoded
 * as the trie stores them). The root of no pairs is keccak256(rlp('')).
 */
export function trieRoot(pairs: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): Uint8Array {
  const items = pairs.map(([key, value]) => ({ nibbles: toNibbles(key), value }))
  items.sort((a, b) => compareNibbles(a.nibbles, b.nibbles))
  for (let i = 1; i < items.length; i++) {
    if (compareNibbles(items[i - 1].nibbles, items[i].nibbles) === 0) throw new Error('trieRoot: duplicate key')
  }
  if (items.length === 0) return keccak_256(RLP.encode(Uint8Array.of()))
  return keccak_256(RLP.encode(node(items, 0, items.length, 0)))
}

interface Item {
  nibbles: Uint8Array
  value: Uint8Array
}

/** The node holding items[from, to) below `depth` nibbles (all share their first `depth` nibbles). */
function node(items: readonly Item[], from: number, to: number, depth: number): TrieNode {
  if (to - from === 1) {
    const item = items[from]
    return [hexPrefix(item.nibbles.subarray(depth), true), item.value]
  }
  // sorted: the prefix shared by all is the prefix shared by the first and the last
  const first = items[from].nibbles
  const last = items[to - 1].nibbles
  let shared = depth
  while (shared < first.length && shared < last.length && first[shared] === last[shared]) shared++
  if (shared > depth) return [hexPrefix(first.subarray(depth, shared), false), reference(node(items, from, to, shared))]
  const branch: TrieNode[] = []
  let i = from
  let value: Uint8Array = Uint8Array.of()
  if (items[i].nibbles.length === depth) value = items[i++].value
  for (let nibble = 0; nibble < 16; nibble++) {
    const start = i
    while (i < to && items[i].nibbles[depth] === nibble) i++
    branch.push(i === start ? Uint8Array.of() : reference(node(items, start, i, depth + 1)))
  }
  branch.push(value)
  return branch
}

/** A child is embedded when its encoding is shorter than 32 bytes, else referenced by hash. */
function reference(child: TrieNode): TrieNode {
  const encoded = RLP.encode(child)
  return encoded.length < 32 ? child : keccak_256(encoded)
}

function hexPrefix(nibbles: Uint8Array, leaf: boolean): Uint8Array {
  const odd = nibbles.length % 2 === 1
  const out = new Uint8Array(Math.floor(nibbles.length / 2) + 1)
  out[0] = ((leaf ? 2 : 0) + (odd ? 1 : 0)) << 4
  let n = 0
  if (odd) out[0] |= nibbles[n++]
  for (let b = 1; n < nibbles.length; b++, n += 2) out[b] = (nibbles[n] << 4) | nibbles[n + 1]
  return out
}

function toNibbles(key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length * 2)
  for (let i = 0; i < key.length; i++) {
    out[2 * i] = key[i] >> 4
    out[2 * i + 1] = key[i] & 15
  }
  return out
}

function compareNibbles(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}
