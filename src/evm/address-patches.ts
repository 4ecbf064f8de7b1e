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
 */

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

export interface AddressPatchModules {
  Address: { prototype: object }
  Journal: { prototype: { isWarmedAddress: unknown; addWarmedAddress: unknown; touchAddress: unknown } }
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
