/**
 * The searcher key that signs relay requests (X-Flashbots-Signature) and identifies us to relays.
 * It never leaves this object: the key is held only in a private field (and viem's account, used for
 * its address), and
 * JSON.stringify, util.inspect, String() and template literals show the address, never the key.
 * Error messages about a bad key never quote the value.
 */
import { inspect } from 'node:util'

import { hexToBytes, serializeSignature } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

import type { Address, Hex } from '../chain/types.ts'
import { keccak256 } from '../crypto/keccak.ts'
import { signHash } from '../crypto/sign.ts'

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/

export class SearcherKey {
  readonly #key: Uint8Array
  /** checksummed address of the key */
  readonly address: Address

  private constructor(key: Uint8Array, address: Address) {
    this.#key = key
    this.address = address
  }

  /**
   * @param privateKey 0x-prefixed 32-byte hex (for example from the SEARCHER_PRIVATE_KEY variable)
   * @throws TypeError when it is not 32 bytes of hex or not a valid secp256k1 key (the message does not contain it)
   */
  static fromHex(privateKey: string): SearcherKey {
    if (typeof privateKey !== 'string' || !PRIVATE_KEY.test(privateKey)) {
      throw new TypeError('searcher private key must be 0x-prefixed 32-byte hex')
    }
    try {
      const hexKey = privateKey.toLowerCase() as Hex
      return new SearcherKey(hexToBytes(hexKey), privateKeyToAccount(hexKey).address)
    } catch {
      throw new TypeError('searcher private key is not a valid secp256k1 private key')
    }
  }

  /** EIP-191 personal_sign of `message` (a UTF-8 string), as viem's account.signMessage signs it. */
  async signMessage(message: string): Promise<Hex> {
    // viem's hashMessage, with the native keccak: every relay request of every open submission is signed at every head
    const bytes = Buffer.from(message, 'utf8')
    const hash = keccak256(Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${bytes.length}`, 'utf8'), bytes]))
    const { r, s, yParity } = await signHash(hash, this.#key)
    return serializeSignature({ r, s, yParity })
  }

  toJSON(): string {
    return this.toString()
  }

  toString(): string {
    return `SearcherKey(${this.address}, private key redacted)`
  }

  [inspect.custom](): string {
    return this.toString()
  }
}
