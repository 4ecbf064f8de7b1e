import fc from 'fast-check'
import { hexToBytes, keccak256, parseTransaction, recoverAddress, recoverTransactionAddress, serializeSignature } from 'viem'
import { privateKeyToAccount, sign as viemSign } from 'viem/accounts'
import { describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import { nativeSigning, recoverHashAddress, signHash } from '../../src/crypto/sign.ts'
import { privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { SearcherKey } from '../../src/submission/searcher-key.ts'

const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex)
// keys below the curve order and not zero
const key = hex32.filter((k) => BigInt(k) > 0n && BigInt(k) < 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n)

describe('signHash', () => {
  it('uses the native binding here', () => {
    expect(nativeSigning).toBe(true)
  })

  it("gives exactly viem's signature (RFC 6979, low s) for any hash and key", async () => {
    await fc.assert(
      fc.asyncProperty(hex32, key, async (hash, privateKey) => {
        const ours = await signHash(hexToBytes(hash), hexToBytes(privateKey))
        const theirs = await viemSign({ hash, privateKey })
        expect(ours).toEqual({ r: theirs.r, s: theirs.s, yParity: theirs.yParity })
      }),
      { numRuns: 200 },
    )
  })

  it('refuses a hash or key of the wrong length, and the zero key', async () => {
    await expect(signHash(new Uint8Array(31), new Uint8Array(32).fill(1))).rejects.toThrow(TypeError)
    await expect(signHash(new Uint8Array(32), new Uint8Array(32))).rejects.toThrow(/cannot sign/)
  })
})

describe('the signers built on it', () => {
  it("SearcherKey.signMessage is viem's personal_sign", async () => {
    await fc.assert(
      // any Unicode: the EIP-191 prefix counts the message's UTF-8 bytes, not its characters
      fc.asyncProperty(key, fc.oneof(fc.string(), fc.string({ unit: 'binary' })), async (privateKey, message) => {
        const ours = await SearcherKey.fromHex(privateKey).signMessage(message)
        expect(ours).toBe(await privateKeyToAccount(privateKey).signMessage({ message }))
      }),
      { numRuns: 50 },
    )
  })

  it("the backrun signer's transaction is viem's, and recovers to the searcher", async () => {
    const privateKey = keccak256('0x01')
    const signer = privateKeyBackrunSigner(privateKey)
    const request = {
      chainId: 31337n,
      nonce: 7n,
      to: '0x00000000000000000000000000000000000000aa' as Hex,
      data: '0x1234' as Hex,
      gasLimit: 300_000n,
      maxFeePerGas: 30_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    }
    const raw = await signer.signTransaction(request)
    const viemRaw = await privateKeyToAccount(privateKey).signTransaction({ type: 'eip1559', chainId: 31337, nonce: 7, to: request.to, data: request.data, value: 0n, gas: request.gasLimit, maxFeePerGas: request.maxFeePerGas, maxPriorityFeePerGas: request.maxPriorityFeePerGas, accessList: [] })
    expect(raw).toBe(viemRaw)
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(signer.address)
    expect(parseTransaction(raw)).toMatchObject({ nonce: 7, gas: 300_000n })
  })
})

describe('recoverHashAddress', () => {
  it("recovers what viem recovers, for any key and hash, with v as 27/28", async () => {
    await fc.assert(
      fc.asyncProperty(hex32, key, async (hash, privateKey) => {
        const sig = await viemSign({ hash, privateKey })
        const serialized = serializeSignature(sig)
        const ours = await recoverHashAddress(hexToBytes(hash), serialized)
        expect(ours).toBe(privateKeyToAccount(privateKey).address)
        expect(ours).toBe(await recoverAddress({ hash, signature: serialized }))
      }),
      { numRuns: 100 },
    )
  })

  it('refuses a malformed signature', async () => {
    await expect(recoverHashAddress(new Uint8Array(32).fill(1), '0x1234')).rejects.toThrow(TypeError)
    await expect(recoverHashAddress(new Uint8Array(32).fill(1), `0x${'11'.repeat(64)}1d`)).rejects.toThrow(/invalid v/)
  })
})
