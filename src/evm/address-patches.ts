/**
 * Addresses as map keys, in the stock EVM (`@ethereumjs/util` 10.1.3 address.js, `@ethereumjs/evm`
 * journal.js), patched without changing what they return. Applied by applyInterpreterPatches
 * (interpreter-patches.ts 10.).
 *
 * Every call frame turns the same few addresses into hex strings about ten times: the state
 * manager keys accounts and code by `address.toString()` (caller and callee read, written, the
 * callee's code loaded, the caller read again after the call), and the EVM journal keys touched
 * accounts by it and warm addresses by the hex of `address.bytes`. The conversion (noble's
 * `bytesToHex`) appends two characters at a time: ~20 intermediate strings and ~600 bytes of
 * garbage per address, ~2 us and a tenth of what a frame allocates on
 * QuadraticComplexitySolidity_CallDataCopy. The Address objects are mostly the same objects
 * (the frame's `env.address`, the message's `to` and `caller`), so:
 *
 * - `Address.toString()` keeps its answer on the Address, and makes it with Node's hex encoder. An Address is never changed in place (its
 *   `bytes` are set once, by the constructor; nothing in ethereumjs or this project writes into
 *   them), so the answer stays right.
 * - the journal's `isWarmedAddress(bytes)` and `addWarmedAddress(bytes)` are given bytes, mostly
 *   of an Address just made from the stack (CALL's target; the gas handler and the handler each
 *   make their own): they convert them with Node's native hex encoder (one string, the same
 *   lowercase hex as noble's), and the last address converted is kept to be answered again.
 * - the journal's `touchAddress(address)` (twice a frame) keeps its `toString().slice(2)` on the
 *   Address as well.
 * - `EVM.getPrecompile(address)`, asked by every call frame whether its code address is a
 *   precompile, looks the Address up by its kept hex (the stock: noble's hex of its bytes).
 * - `Interpreter.getCaller()` (CALLER) and ADDRESS in the inline batch (inline-steps.ts) take the
 *   address as a bigint from `addressWord`, kept on the Address too (the stock: bytesToBigInt
 *   through a hex string at each call).
 * - the journal's `cleanup()`, at the end of every call and transaction (EIP-161: touched empty
 *   accounts deleted), makes an Address of each touched account's hex through ethereumjs'
 *   `hexToBytes` (a regex check and a two-characters-a-time parse) and then turns it back into hex
 *   to read the account: ~1% of a quote's CPU on the bench:quote mix. Here the stock function line
 *   for line, with the Address made from the hex by Node's decoder and given that same hex as its
 *   kept `toString` (`addressOfUnprefixedHex`).
 */

import { Hardfork } from '@ethereumjs/common'
import { hexToBytes } from '@ethereumjs/util'

const HEX = Symbol('address hex')
const UNPREFIXED = Symbol('address hex without 0x')
const WORD = Symbol('address word')

interface AddressLike {
  bytes: Uint8Array
  [HEX]?: string
  [UNPREFIXED]?: string
  [WORD]?: bigint
  toString(): string
}

/** What addressWord reads of an Address. */
export interface AddressWithBytes {
  bytes: Uint8Array
  [WORD]?: bigint
}

/**
 * The address as a stack word, `bytesToBigInt(address.bytes)` (ethereumjs' ADDRESS handler and
 * `Interpreter.getCaller`, through a hex string each time: ~20 CALLERs and ADDRESSes a frame in
 * compiled Solidity), kept on the Address as its hex is (its bytes never change).
 */
export function addressWord(address: AddressWithBytes): bigint {
  let word = address[WORD]
  if (word === undefined) {
    const bytes = address.bytes
    word = bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`)
    address[WORD] = word
  }
  return word
}

/** Keeps on a new Address the word it was made from (call-opcodes.ts), as `addressWord` would. */
export function keepAddressWord(address: AddressWithBytes, word: bigint): void {
  address[WORD] = word
}

interface TouchingJournal {
  touchAccount(address: string): void
}

interface WarmJournal {
  journal: Map<string, Set<string>>
  alwaysWarmJournal: Map<string, unknown>
  journalDiff: Array<[number, [Set<string>, ...unknown[]]]>
  accessList?: Map<string, Set<string>>
}

/** What the stock `Journal.cleanup` uses of the journal (@ethereumjs/evm 10.1.3 journal.js). */
interface CleaningJournal {
  common: { gteHardfork(hardfork: string): boolean }
  touched: Set<string>
  stateManager: { getAccount(address: AddressLike): Promise<{ isEmpty(): boolean } | undefined> }
  deleteAccount(address: AddressLike): Promise<void>
  DEBUG: boolean
  _debug(message: string): void
  cleanJournal(): void
  accessList?: unknown
  preimages?: unknown
}

export interface AddressPatchModules {
  Address: { prototype: object; new (bytes: Uint8Array): object }
  Journal: { prototype: { isWarmedAddress: unknown; addWarmedAddress: unknown; touchAddress: unknown; cleanup: unknown } }
  EVM: { prototype: { getPrecompile: unknown } }
}

interface PrecompileTable {
  precompiles: Map<string, unknown>
}

/** Where addresses are turned into hex (Buffer's native encoder, no Buffer made per address). */
const scratch = Buffer.alloc(20)
/** The last address converted: a CALL's target is converted from three different arrays of the same bytes. */
const last = { bytes: new Uint8Array(20), hex: '0000000000000000000000000000000000000000' }

/** The lowercase hex of `bytes`, without 0x: what noble's `bytesToHex` (ethereumjs' `bytesToUnprefixedHex`) gives. */
export function unprefixedHex(bytes: Uint8Array): string {
  if (bytes.length !== 20) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
  const seen = last.bytes
  let same = true
  for (let i = 0; i < 20; i++) {
    if (bytes[i] !== seen[i]) {
      same = false
      break
    }
  }
  if (same) return last.hex
  scratch.set(bytes)
  const hex = scratch.toString('hex')
  seen.set(bytes)
  last.hex = hex
  return hex
}

/** The Address class the patches were applied to (ethereumjs' `Address`), for addressOfUnprefixedHex. */
let AddressClass: (new (bytes: Uint8Array) => object) | undefined

/**
 * The Address of 40 hex digits without 0x (a journal key): what `new Address(hexToBytes(`0x${hex}`))`
 * gives, its bytes decoded by Node's hex decoder into an array of their own, and the hex kept as
 * its `toString()` and touch key (the same lowercase string for the lowercase keys the journal
 * makes). Anything but 40 hex digits goes to ethereumjs' own parsing, which refuses it as it did.
 */
export function addressOfUnprefixedHex(hex: string, parse: (hex: string) => AddressLike): AddressLike {
  if (AddressClass === undefined || !/^[0-9a-f]{40}$/.test(hex)) return parse(hex)
  const bytes = new Uint8Array(20)
  bytes.set(Buffer.from(hex, 'hex'))
  const address = new AddressClass(bytes) as AddressLike
  address[HEX] = `0x${hex}`
  address[UNPREFIXED] = hex
  return address
}

let patched = false

export function patchAddresses({ Address, Journal, EVM }: AddressPatchModules): void {
  if (patched) return
  patched = true
  const proto = Address.prototype as AddressLike
  proto.toString = function (this: AddressLike): string {
    let hex = this[HEX]
    if (hex === undefined) {
      hex = `0x${unprefixedHex(this.bytes)}`
      this[HEX] = hex
    }
    return hex
  }

  // the stock function; an Address by its kept hex
  EVM.prototype.getPrecompile = function (this: PrecompileTable, address: string | AddressLike): unknown {
    if (typeof address === 'string') {
      return this.precompiles.get(address.slice(2).padStart(40, '0').toLowerCase())
    }
    return this.precompiles.get(address.toString().slice(2))
  }

  // the stock function (`address.toString().slice(2)`), the sliced string kept on the Address too:
  // the same string each time, its hash computed once
  Journal.prototype.touchAddress = function (this: TouchingJournal, address: AddressLike): void {
    let hex = address[UNPREFIXED]
    if (hex === undefined) {
      hex = address.toString().slice(2)
      address[UNPREFIXED] = hex
    }
    this.touchAccount(hex)
  }

  AddressClass = Address
  const parseAddress = (hex: string) => new Address(hexToBytes(`0x${hex}`)) as AddressLike
  // the stock function (journal.js `cleanup`), the touched accounts' Addresses from addressOfUnprefixedHex
  Journal.prototype.cleanup = async function (this: CleaningJournal): Promise<void> {
    if (this.common.gteHardfork(Hardfork.SpuriousDragon)) {
      for (const addressHex of this.touched) {
        const address = addressOfUnprefixedHex(addressHex, parseAddress)
        const account = await this.stateManager.getAccount(address)
        if (account === undefined || account.isEmpty()) {
          await this.deleteAccount(address)
          if (this.DEBUG) {
            this._debug(`Cleanup touched account address=${address.toString()} (>= SpuriousDragon)`)
          }
        }
      }
    }
    this.cleanJournal()
    delete this.accessList
    delete this.preimages
  }

  // the stock functions with the key from unprefixedHex (the stock: bytesToUnprefixedHex(bytes))
  Journal.prototype.isWarmedAddress = function (this: WarmJournal, address: Uint8Array): boolean {
    const addressHex = unprefixedHex(address)
    return this.journal.has(addressHex) || this.alwaysWarmJournal.has(addressHex)
  }
  Journal.prototype.addWarmedAddress = function (this: WarmJournal, addressArr: Uint8Array): void {
    const address = unprefixedHex(addressArr)
    if (!this.journal.has(address)) {
      this.journal.set(address, new Set())
      const diffArr = this.journalDiff[this.journalDiff.length - 1][1]
      diffArr[0].add(address)
    }
    if (this.accessList !== undefined) {
      if (!this.accessList.has(address)) {
        this.accessList.set(address, new Set())
      }
    }
  }
}
