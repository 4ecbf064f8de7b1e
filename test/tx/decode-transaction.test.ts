import { readFileSync } from 'node:fs'

import { RLP } from '@ethereumjs/rlp'
import { paramsTx } from '@ethereumjs/tx'
import {
  type Hex as ViemHex,
  type TransactionSerializable,
  type TransactionSerialized,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  serializeTransaction,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import {
  DEFAULT_MAX_TX_BYTES,
  type DecodedTransaction,
  decodeSignedTransaction,
} from '../../src/tx/decode-transaction.ts'
import { TxDecodeError, type TxDecodeErrorReason } from '../../src/tx/errors.ts'
import { hiddenClassCount } from '../support/hidden-class.ts'

// ---------------------------------------------------------------------------------------------
// helpers

const DEV_CHAIN = 31337n
const ANVIL_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const account = privateKeyToAccount(ANVIL_KEY)
const SENDER = account.address.toLowerCase()
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const SECP256K1_P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn

function expectReject(
  raw: unknown,
  reason: TxDecodeErrorReason,
  options: Parameters<typeof decodeSignedTransaction>[1] = { chainId: DEV_CHAIN },
): TxDecodeError {
  let caught: unknown
  try {
    decodeSignedTransaction(raw as string, options)
  } catch (error) {
    caught = error
  }
  expect(caught, `expected a TxDecodeError(${reason})`).toBeInstanceOf(TxDecodeError)
  const error = caught as TxDecodeError
  expect(error.reason, error.message).toBe(reason)
  expect(error.name).toBe('TxDecodeError')
  expect(error.message.length).toBeGreaterThan(10)
  return error
}

function hexOf(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes).toString('hex')}`
}

function bytesOf(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex.slice(2), 'hex'))
}

function bigBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array()
  const h = n.toString(16)
  return bytesOf(`0x${h.length % 2 === 0 ? h : `0${h}`}`)
}

type Nested = Uint8Array | Nested[]

/** Split a serialized tx into its type byte (or null for legacy) and decoded RLP field list. */
function splitTx(raw: Hex): { type: number | null; fields: Nested[] } {
  const bytes = bytesOf(raw)
  const typed = bytes[0] < 0x80
  const fields = RLP.decode(typed ? bytes.subarray(1) : bytes) as Nested[]
  return { type: typed ? bytes[0] : null, fields }
}

function joinTx(type: number | null, fields: Nested[]): Hex {
  const body = RLP.encode(fields)
  return hexOf(type === null ? body : Uint8Array.from([type, ...body]))
}

/** Re-encode a tx with fields replaced (signature left as is unless replaced too). */
function tamper(raw: Hex, edit: (fields: Nested[]) => void): Hex {
  const { type, fields } = splitTx(raw)
  edit(fields)
  return joinTx(type, fields)
}

/** RLP list header + already-encoded items, to build encodings RLP.encode would never produce. */
function rawList(encodedItems: Uint8Array[]): Uint8Array {
  const payload = Buffer.concat(encodedItems)
  const header =
    payload.length <= 55
      ? Uint8Array.from([0xc0 + payload.length])
      : Uint8Array.from([0xf7 + bigBytes(BigInt(payload.length)).length, ...bigBytes(BigInt(payload.length))])
  return new Uint8Array(Buffer.concat([header, payload]))
}

const ROUTER = '0x5fbdb2315678afecb367f032d93f642f64180aa3'
const TOKEN = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512'

const baseFields = {
  chainId: Number(DEV_CHAIN),
  nonce: 7,
  gas: 120_000n,
  to: ROUTER,
  value: 1_000_000_000_000_000n,
  data: '0x38ed17390000000000000000000000000000000000000000000000000000000000000001',
} as const

async function signedEip1559(overrides: Partial<TransactionSerializable> = {}): Promise<Hex> {
  return (await account.signTransaction({
    ...baseFields,
    type: 'eip1559',
    maxFeePerGas: 30_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    ...overrides,
  } as TransactionSerializable)) as Hex
}

function ok(raw: string | Uint8Array, chainId = DEV_CHAIN): DecodedTransaction {
  return decodeSignedTransaction(raw, { chainId })
}

// ---------------------------------------------------------------------------------------------
// ethereum/tests TransactionTests

interface VectorResultValid {
  hash: string
  sender: string
  intrinsicGas?: string
}
interface VectorResultInvalid {
  exception: string
}
interface Vector {
  name: string
  path: string
  txbytes: string
  result: Record<string, VectorResultValid | VectorResultInvalid>
}

const vectorFile = JSON.parse(
  readFileSync(new URL('../../fixtures/corpora/tx-vectors/ethereum_tests_TransactionTests_subset.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] }

/** Oldest to newest; the newest fork a vector lists is the one whose rules we run (prague). */
const FORK_ORDER = [
  'Frontier', 'Homestead', 'EIP150', 'EIP158', 'Byzantium', 'Constantinople', 'ConstantinopleFix', 'Istanbul',
  'Berlin', 'London', 'Merge', 'Paris', 'Shanghai', 'Cancun', 'Prague', 'Osaka',
]

function newestResult(vector: Vector): { fork: string; result: VectorResultValid | VectorResultInvalid } {
  const forks = Object.keys(vector.result)
  for (const fork of forks) expect(FORK_ORDER, `unknown fork ${fork} in ${vector.name}`).toContain(fork)
  const fork = forks.sort((a, b) => FORK_ORDER.indexOf(b) - FORK_ORDER.indexOf(a))[0]
  return { fork, result: vector.result[fork] }
}

/** ethereum/tests exception name -> our reason. */
const EXCEPTION_REASON: Record<string, TxDecodeErrorReason> = {
  LeadingZerosNonce: 'rlp',
  InvalidVRS: 'signature',
  '1559PriorityFeeGreaterThanBaseFee': 'invalid_fields',
  TR_TypeNotSupported: 'unsupported_type',
}

describe('ethereum/tests TransactionTests (mainnet, chain id 1)', () => {
  it('fixture holds both valid and invalid vectors', () => {
    const kinds = vectorFile.vectors.map((v) => 'hash' in newestResult(v).result)
    expect(kinds).toContain(true)
    expect(kinds).toContain(false)
  })

  for (const vector of vectorFile.vectors) {
    const { fork, result } = newestResult(vector)
    if ('hash' in result) {
      it(`${vector.name} (${fork}): valid, hash and sender match`, () => {
        const decoded = ok(vector.txbytes, 1n)
        expect(decoded.hash).toBe(result.hash)
        expect(decoded.sender).toBe(result.sender)
        expect(decoded.rawHex).toBe(vector.txbytes.toLowerCase())
        expect(decoded.tx.getSenderAddress().toString()).toBe(result.sender)
        if (result.intrinsicGas !== undefined) {
          expect(decoded.tx.getIntrinsicGas()).toBe(BigInt(result.intrinsicGas))
        }
      })
    } else {
      const reason = EXCEPTION_REASON[result.exception]
      it(`${vector.name} (${fork}): rejected (${result.exception} -> ${reason ?? 'any reason'})`, () => {
        if (reason === undefined) {
          expect(() => ok(vector.txbytes, 1n)).toThrow(TxDecodeError)
        } else {
          expectReject(vector.txbytes, reason, { chainId: 1n })
        }
      })
    }
  }

  it('Vitalik_1 is EIP-155 legacy for chain 1', () => {
    const v = vectorFile.vectors.find((x) => x.name === 'Vitalik_1') as Vector
    const decoded = ok(v.txbytes, 1n)
    expect(decoded.type).toBe(0)
    expect(decoded.chainId).toBe(1n)
    expect(decoded.gasPrice).toBe(20_000_000_000n)
    expect(decoded.to).toBe('0x3535353535353535353535353535353535353535')
    // still accepted when unprotected legacy is refused: it carries a chain id
    expect(decodeSignedTransaction(v.txbytes, { chainId: 1n, allowUnprotectedLegacy: false }).sender).toBe(decoded.sender)
  })

  it('SenderTest is unprotected legacy: accepted by default, chainId undefined; refused when disabled', () => {
    const v = vectorFile.vectors.find((x) => x.name === 'SenderTest') as Vector
    const decoded = ok(v.txbytes, 1n)
    expect(decoded.type).toBe(0)
    expect(decoded.chainId).toBeUndefined()
    expect(decoded.signature.v).toBe(27n)
    // no chain id in the signature, so any service chain accepts it by default
    expect(ok(v.txbytes, DEV_CHAIN).hash).toBe(decoded.hash)
    const error = expectReject(v.txbytes, 'chain_id', { chainId: 1n, allowUnprotectedLegacy: false })
    expect(error.message).toMatch(/not replay-protected/)
  })

  it('accessListStorage32Bytes exposes its access list', () => {
    const v = vectorFile.vectors.find((x) => x.name === 'accessListStorage32Bytes') as Vector
    const decoded = ok(v.txbytes, 1n)
    expect(decoded.type).toBe(1)
    expect(decoded.chainId).toBe(1n)
    expect(decoded.accessList).toEqual([
      { address: '0xa95e7baea6a6c7c4c2dfeb977efac326af552d87', storageKeys: [`0x${'ff'.repeat(32)}`] },
    ])
  })
})

// ---------------------------------------------------------------------------------------------
// Fresh transactions signed with viem

describe('transactions signed with viem (anvil dev key, chain 31337)', () => {
  async function check(serialized: Hex, expectType: 0 | 1 | 2 | 4): Promise<DecodedTransaction> {
    const decoded = ok(serialized)
    const parsed = parseTransaction(serialized as ViemHex)
    expect(decoded.type).toBe(expectType)
    expect(decoded.hash).toBe(keccak256(serialized as ViemHex))
    expect(decoded.sender).toBe(SENDER)
    expect(decoded.sender).toBe((await recoverTransactionAddress({ serializedTransaction: serialized as TransactionSerialized })).toLowerCase())
    expect(decoded.rawHex).toBe(serialized)
    expect(decoded.raw).toEqual(bytesOf(serialized))
    expect(decoded.nonce).toBe(BigInt(parsed.nonce ?? 0))
    expect(decoded.gasLimit).toBe(parsed.gas)
    expect(decoded.value).toBe(parsed.value ?? 0n)
    expect(decoded.to).toBe(parsed.to === undefined || parsed.to === null ? null : parsed.to.toLowerCase())
    expect(hexOf(decoded.data)).toBe(parsed.data ?? '0x')
    // the ethereumjs object agrees and is bound to the service's chain
    expect(hexOf(decoded.tx.hash())).toBe(decoded.hash)
    expect(decoded.tx.common.chainId()).toBe(DEV_CHAIN)
    expect(decoded.tx.common.hardfork()).toBe('prague')
    return decoded
  }

  it('legacy with EIP-155', async () => {
    const raw = (await account.signTransaction({ ...baseFields, type: 'legacy', gasPrice: 2_000_000_000n })) as Hex
    const d = await check(raw, 0)
    expect(d.chainId).toBe(DEV_CHAIN)
    expect(d.gasPrice).toBe(2_000_000_000n)
    expect(d.gasFeeCap).toBe(2_000_000_000n)
    expect(d.gasTipCap).toBe(2_000_000_000n)
    expect(d.signature.v === DEV_CHAIN * 2n + 35n || d.signature.v === DEV_CHAIN * 2n + 36n).toBe(true)
    expect(d.accessList).toBeUndefined()
    // signed for 31337, so chain 1 refuses it
    expectReject(raw, 'chain_id', { chainId: 1n })
  })

  it('legacy without EIP-155 (unprotected)', async () => {
    const { chainId: _omit, ...noChain } = baseFields
    const raw = (await account.signTransaction({ ...noChain, type: 'legacy', gasPrice: 2_000_000_000n })) as Hex
    const d = await check(raw, 0)
    expect(d.chainId).toBeUndefined()
    expect([27n, 28n]).toContain(d.signature.v)
    expectReject(raw, 'chain_id', { chainId: DEV_CHAIN, allowUnprotectedLegacy: false })
  })

  it('EIP-2930 with an access list', async () => {
    const accessList = [
      { address: TOKEN, storageKeys: [`0x${'00'.repeat(31)}01`, `0x${'ab'.repeat(32)}`] },
      { address: ROUTER, storageKeys: [] },
    ] as const
    const raw = (await account.signTransaction({
      ...baseFields,
      type: 'eip2930',
      gasPrice: 3_000_000_000n,
      accessList,
    } as TransactionSerializable)) as Hex
    const d = await check(raw, 1)
    expect(d.chainId).toBe(DEV_CHAIN)
    expect(d.gasPrice).toBe(3_000_000_000n)
    expect(d.accessList).toEqual(accessList.map((e) => ({ address: e.address, storageKeys: [...e.storageKeys] })))
  })

  it('EIP-1559 call', async () => {
    const raw = await signedEip1559({ accessList: [{ address: TOKEN, storageKeys: [] }] })
    const d = await check(raw, 2)
    expect(d.chainId).toBe(DEV_CHAIN)
    expect(d.maxFeePerGas).toBe(30_000_000_000n)
    expect(d.maxPriorityFeePerGas).toBe(1_000_000_000n)
    expect(d.gasFeeCap).toBe(30_000_000_000n)
    expect(d.gasTipCap).toBe(1_000_000_000n)
    expect(d.gasPrice).toBeUndefined()
    expect(d.accessList).toEqual([{ address: TOKEN, storageKeys: [] }])
    expect([0, 1]).toContain(d.signature.yParity)
  })

  it('EIP-1559 contract creation has to = null', async () => {
    const raw = await signedEip1559({ to: undefined, data: '0x6080604052348015600f57600080fd5b50', value: 0n })
    const d = await check(raw, 2)
    expect(d.to).toBeNull()
  })

  it('EIP-7702 with a signed authorization list', async () => {
    const auth = await account.signAuthorization({ address: TOKEN, chainId: Number(DEV_CHAIN), nonce: 8 })
    const anyChainAuth = await account.signAuthorization({ address: ROUTER, chainId: 0, nonce: 9 })
    const raw = (await account.signTransaction({
      ...baseFields,
      type: 'eip7702',
      to: account.address,
      maxFeePerGas: 30_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      authorizationList: [auth, anyChainAuth],
    })) as Hex
    const d = await check(raw, 4)
    if (d.type !== 4) throw new Error('unreachable')
    expect(d.to).toBe(SENDER)
    expect(d.maxFeePerGas).toBe(30_000_000_000n)
    expect(d.authorizationList).toHaveLength(2)
    expect(d.authorizationList[0]).toMatchObject({ chainId: DEV_CHAIN, address: TOKEN, nonce: 8n, authority: SENDER })
    expect(d.authorizationList[0].r).toBe(BigInt(auth.r))
    expect(d.authorizationList[0].s).toBe(BigInt(auth.s))
    expect(d.authorizationList[0].yParity).toBe(auth.yParity)
    expect(d.authorizationList[1]).toMatchObject({ chainId: 0n, address: ROUTER, nonce: 9n, authority: SENDER })
    expect(d.tx.authorizationList).toHaveLength(2)
  })

  it('EIP-7702 authorization with a high-s signature has authority null but the tx stays valid', async () => {
    const auth = await account.signAuthorization({ address: TOKEN, chainId: Number(DEV_CHAIN), nonce: 8 })
    const raw = (await account.signTransaction({
      ...baseFields,
      type: 'eip7702',
      maxFeePerGas: 30_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      authorizationList: [
        { ...auth, s: `0x${(SECP256K1_N - BigInt(auth.s)).toString(16).padStart(64, '0')}`, yParity: 1 - (auth.yParity ?? 0) },
      ],
    })) as Hex
    const d = ok(raw)
    if (d.type !== 4) throw new Error('unreachable')
    expect(d.sender).toBe(SENDER)
    expect(d.authorizationList[0].authority).toBeNull()
  })

  it('accepts Uint8Array input and uppercase hex digits; raw is the input bytes', async () => {
    const raw = await signedEip1559()
    const fromBytes = ok(bytesOf(raw))
    expect(fromBytes.hash).toBe(keccak256(raw as ViemHex))
    const upper = ok(`0x${raw.slice(2).toUpperCase()}`)
    expect(upper.hash).toBe(fromBytes.hash)
    expect(upper.rawHex).toBe(raw)
    // every spelling of the same bytes is the one remembered answer
    expect(ok(`0X${raw.slice(2)}`)).toBe(fromBytes)
    expect(ok(raw)).toBe(upper)
  })

  it('remember: false leaves a new answer out of the memo, and still finds a remembered one', async () => {
    const raw = await signedEip1559({ nonce: 77 })
    const once = decodeSignedTransaction(raw, { chainId: DEV_CHAIN, remember: false })
    const again = decodeSignedTransaction(raw, { chainId: DEV_CHAIN, remember: false })
    expect(again).not.toBe(once)
    expect(again).toEqual(once)
    const remembered = ok(raw)
    expect(remembered).not.toBe(once)
    expect(decodeSignedTransaction(raw, { chainId: DEV_CHAIN, remember: false })).toBe(remembered)
    // raw is a copy: mutating the caller's buffer afterwards does not change it
    const input = bytesOf(raw)
    const d = ok(input)
    input[5] ^= 0xff
    expect(d.raw).toEqual(bytesOf(raw))
  })

  it('transactions decoded under one Common share one ethereumjs Common copy (not ~12 KB each), whatever their type', async () => {
    const common = ok(await signedEip1559()).tx.common
    const a = decodeSignedTransaction(await signedEip1559({ nonce: 11 }), { chainId: DEV_CHAIN, common })
    const b = decodeSignedTransaction(await signedEip1559({ nonce: 12 }), { chainId: DEV_CHAIN, common })
    const legacy = decodeSignedTransaction((await account.signTransaction({ ...baseFields, nonce: 13, type: 'legacy', gasPrice: 2_000_000_000n })) as Hex, { chainId: DEV_CHAIN, common })
    expect(a.tx.common).toBe(b.tx.common)
    // not the caller's own Common: ethereumjs' copy carries the transaction parameters
    expect(a.tx.common).not.toBe(common)
    expect(a.tx.common.param('txGas')).toBe(21_000n)
    expect(legacy.tx.common).toBe(a.tx.common)
    // the constructor's updateParams(paramsTx) on the shared copy is skipped: its parameter cache is
    // not rebuilt (a JSON round trip of every EIP's parameters) for each transaction
    const paramsCache = (a.tx.common as unknown as { _paramsCache: object })._paramsCache
    decodeSignedTransaction(await signedEip1559({ nonce: 15 }), { chainId: DEV_CHAIN, common })
    expect((a.tx.common as unknown as { _paramsCache: object })._paramsCache).toBe(paramsCache)
    // any other parameter change still applies, and paramsTx is applied again after it
    a.tx.common.updateParams({ 1: { txGas: 1 } })
    expect(a.tx.common.param('txGas')).toBe(1n)
    a.tx.common.updateParams(paramsTx)
    expect(a.tx.common.param('txGas')).toBe(21_000n)
    // a copy moved to another hardfork (runTx does that for a block of another fork) is not shared
    b.tx.common.setHardfork('cancun')
    const c = decodeSignedTransaction(await signedEip1559({ nonce: 14 }), { chainId: DEV_CHAIN, common })
    expect(c.tx.common.hardfork()).toBe('prague')
    expect(c.tx.common).not.toBe(b.tx.common)
    b.tx.common.setHardfork('prague')
  })

  it('uses a given Common (and its hardfork) for the ethereumjs object', async () => {
    const raw = await signedEip1559()
    const first = ok(raw)
    const d = decodeSignedTransaction(raw, { chainId: DEV_CHAIN, common: first.tx.common })
    expect(d.hash).toBe(first.hash)
    expect(() => decodeSignedTransaction(raw, { chainId: 1n, common: first.tx.common })).toThrow(RangeError)
    expect(() => decodeSignedTransaction(raw, { chainId: DEV_CHAIN, hardfork: 'not-a-fork' })).toThrow(RangeError)
    expect(decodeSignedTransaction(raw, { chainId: DEV_CHAIN, hardfork: 'cancun' }).tx.common.hardfork()).toBe('cancun')
  })
})

// ---------------------------------------------------------------------------------------------
// One test per refusal reason (and the edge cases behind each)

describe('refusals', () => {
  describe("'chain_id'", () => {
    it('a chain-1 transaction sent to a 31337 service', () => {
      const v = vectorFile.vectors.find((x) => x.name === 'Vitalik_1') as Vector
      const error = expectReject(v.txbytes, 'chain_id', { chainId: DEV_CHAIN })
      expect(error.message).toBe("transaction chain id 1 does not match this service's chain id 31337")
    })

    it('a typed 31337 transaction sent to a chain-1 service', async () => {
      const error = expectReject(await signedEip1559(), 'chain_id', { chainId: 1n })
      expect(error.message).toBe("transaction chain id 31337 does not match this service's chain id 1")
    })
  })

  describe("'signature'", () => {
    const n = SECP256K1_N

    it('high-s (EIP-2) on a typed transaction', async () => {
      const raw = await signedEip1559()
      const parsed = parseTransaction(raw as ViemHex)
      const highS = serializeTransaction(parsed as TransactionSerializable, {
        r: parsed.r as ViemHex,
        s: `0x${(n - BigInt(parsed.s as ViemHex)).toString(16).padStart(64, '0')}`,
        yParity: 1 - (parsed.yParity ?? 0),
      }) as Hex
      const error = expectReject(highS, 'signature')
      expect(error.message).toMatch(/secp256k1n\/2/)
      expect(error.message).toMatch(/EIP-2/)
    })

    it('high-s on a legacy transaction', async () => {
      const raw = (await account.signTransaction({ ...baseFields, type: 'legacy', gasPrice: 1n })) as Hex
      const highS = tamper(raw, (f) => {
        const s = BigInt(hexOf(f[8] as Uint8Array))
        f[8] = bigBytes(n - s)
        const v = BigInt(hexOf(f[6] as Uint8Array))
        f[6] = bigBytes(v % 2n === 0n ? v - 1n : v + 1n)
      })
      expectReject(highS, 'signature')
    })

    it('r = 0 and s = 0', async () => {
      const raw = await signedEip1559()
      expectReject(tamper(raw, (f) => { f[10] = new Uint8Array() }), 'signature')
      expectReject(tamper(raw, (f) => { f[11] = new Uint8Array() }), 'signature')
    })

    it('r not below the curve order', async () => {
      expectReject(tamper(await signedEip1559(), (f) => { f[10] = bigBytes(n) }), 'signature')
    })

    it('r that is no curve point x coordinate (unrecoverable)', async () => {
      // Euler's criterion: r^3 + 7 must be a square mod p for a point with x = r to exist
      const modPow = (b: bigint, e: bigint, m: bigint): bigint => {
        let result = 1n
        b %= m
        for (; e > 0n; e >>= 1n, b = (b * b) % m) if (e & 1n) result = (result * b) % m
        return result
      }
      let r = 1n
      while (modPow((r ** 3n + 7n) % SECP256K1_P, (SECP256K1_P - 1n) / 2n, SECP256K1_P) === 1n) r++
      const error = expectReject(tamper(await signedEip1559(), (f) => { f[10] = bigBytes(r) }), 'signature')
      expect(error.message).toMatch(/no public key can be recovered/)
      expect(error.cause).toBeDefined()
    })

    it('yParity other than 0/1, and legacy v that is neither 27/28 nor EIP-155', async () => {
      expectReject(tamper(await signedEip1559(), (f) => { f[9] = Uint8Array.from([2]) }), 'signature')
      const legacy = (await account.signTransaction({ ...baseFields, type: 'legacy', gasPrice: 1n })) as Hex
      expectReject(tamper(legacy, (f) => { f[6] = Uint8Array.from([29]) }), 'signature')
      expectReject(tamper(legacy, (f) => { f[6] = Uint8Array.from([36]) }), 'signature')
    })

    it('r longer than 32 bytes (ethereum/tests InvalidVRS)', async () => {
      expectReject(tamper(await signedEip1559(), (f) => { f[10] = Uint8Array.from([1, ...new Uint8Array(32)]) }), 'signature')
    })

    it('unsigned transaction', () => {
      const unsigned = serializeTransaction({
        ...baseFields,
        type: 'eip1559',
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
      }) as Hex
      const error = expectReject(unsigned, 'signature')
      expect(error.message).toMatch(/not signed/)
    })
  })

  describe("'rlp'", () => {
    it('garbage', () => {
      expectReject('0xdeadbeef', 'rlp')
      expectReject('0xc0', 'rlp')
      expectReject('0xc3010203', 'rlp')
      expectReject('0x02', 'rlp')
      expectReject('0x02deadbeef', 'rlp')
      expectReject('0x0280', 'rlp')
    })

    it('first byte 0x80-0xbf is neither a list nor a type byte', () => {
      const error = expectReject('0x8401020304', 'rlp')
      expect(error.message).toMatch(/neither an RLP list/)
    })

    it('trailing bytes after a valid transaction', async () => {
      const error = expectReject(`${await signedEip1559()}00`, 'rlp')
      expect(error.message).toMatch(/extra bytes/)
      expect(error.cause).toBeInstanceOf(Error)
    })

    it('truncated transaction', async () => {
      const raw = await signedEip1559()
      expectReject(raw.slice(0, -2), 'rlp')
    })

    it('non-canonical length prefix (single byte < 0x80 wrapped in 0x81)', async () => {
      const { type, fields } = splitTx(await signedEip1559())
      const encoded = fields.map((f) => RLP.encode(f))
      encoded[1] = Uint8Array.from([0x81, 0x07]) // nonce 7, canonically just 0x07
      const bytes = Uint8Array.from([type as number, ...rawList(encoded)])
      const error = expectReject(hexOf(bytes), 'rlp')
      expect(error.message).toMatch(/non-canonical/)
    })

    it('integer with leading zero bytes', async () => {
      const error = expectReject(tamper(await signedEip1559(), (f) => { f[1] = Uint8Array.from([0, 7]) }), 'rlp')
      expect(error.message).toMatch(/nonce has leading zero/)
    })

    it('wrong field count, and a list where a value belongs', async () => {
      expectReject(tamper(await signedEip1559(), (f) => { f.push(new Uint8Array()) }), 'rlp')
      expectReject(tamper(await signedEip1559(), (f) => { f[6] = [] }), 'rlp')
    })
  })

  describe("'unsupported_type'", () => {
    it('type 0x05', async () => {
      const body = splitTx(await signedEip1559()).fields
      const error = expectReject(joinTx(0x05, body), 'unsupported_type')
      expect(error.message).toMatch(/unsupported transaction type 0x05/)
      expectReject('0x7f', 'unsupported_type')
      expectReject('0x00c0', 'unsupported_type')
    })

    it('type 0x03 (blob) is refused with the reason', async () => {
      const body = splitTx(await signedEip1559()).fields
      const error = expectReject(joinTx(0x03, body), 'unsupported_type')
      expect(error.message).toMatch(/blob/)
      expect(error.message).toMatch(/sidecar/)
    })

    it('a type not active at the configured hardfork', async () => {
      const auth = await account.signAuthorization({ address: TOKEN, chainId: Number(DEV_CHAIN), nonce: 8 })
      const setCode = (await account.signTransaction({
        ...baseFields,
        type: 'eip7702',
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
        authorizationList: [auth],
      })) as Hex
      const error = expectReject(setCode, 'unsupported_type', { chainId: DEV_CHAIN, hardfork: 'cancun' })
      expect(error.message).toMatch(/not active at hardfork cancun/)
      expectReject(await signedEip1559(), 'unsupported_type', { chainId: DEV_CHAIN, hardfork: 'berlin' })
    })
  })

  describe("'malformed_hex'", () => {
    it('odd-length hex', async () => {
      const error = expectReject(`${await signedEip1559()}0`, 'malformed_hex')
      expect(error.message).toMatch(/odd number of digits/)
    })

    it('missing 0x prefix, non-hex characters, not a string', async () => {
      const raw = await signedEip1559()
      expectReject(raw.slice(2), 'malformed_hex')
      const error = expectReject(`${raw.slice(0, 10)}zz${raw.slice(12)}`, 'malformed_hex')
      expect(error.message).toBe('transaction hex contains a non-hex character "z" at position 10')
      // the first non-hex digit is named, whether it is the first or the second of its byte
      expect(expectReject(`${raw.slice(0, 11)}g${raw.slice(12)}`, 'malformed_hex').message).toBe('transaction hex contains a non-hex character "g" at position 11')
      expectReject('0x 02', 'malformed_hex')
      expectReject(12345, 'malformed_hex')
      expectReject(null, 'malformed_hex')
    })
  })

  describe("'empty'", () => {
    it('"0x", "" and zero bytes', () => {
      expectReject('0x', 'empty')
      expectReject('', 'empty')
      expectReject(new Uint8Array(), 'empty')
    })
  })

  describe("'too_large'", () => {
    it('over a configured limit, as hex or bytes', async () => {
      const raw = await signedEip1559()
      const size = bytesOf(raw).length
      expect(ok(raw).hash).toBe(keccak256(raw as ViemHex))
      expect(decodeSignedTransaction(raw, { chainId: DEV_CHAIN, maxBytes: size }).hash).toBe(keccak256(raw as ViemHex))
      const error = expectReject(raw, 'too_large', { chainId: DEV_CHAIN, maxBytes: size - 1 })
      expect(error.message).toBe(`transaction is ${size} bytes; the limit is ${size - 1} bytes`)
      expectReject(bytesOf(raw), 'too_large', { chainId: DEV_CHAIN, maxBytes: size - 1 })
    })

    it('over the default limit (128 KiB), checked before the hex is parsed', async () => {
      expect(DEFAULT_MAX_TX_BYTES).toBe(131072)
      const huge = await signedEip1559({ data: `0x${'01'.repeat(DEFAULT_MAX_TX_BYTES)}`, gas: 30_000_000n })
      expectReject(huge, 'too_large')
      expectReject(`0x${'zz'.repeat(DEFAULT_MAX_TX_BYTES + 1)}`, 'too_large')
    })

    it('rejects a nonsensical maxBytes option as a programming error', () => {
      expect(() => decodeSignedTransaction('0x00', { chainId: 1n, maxBytes: 0 })).toThrow(RangeError)
    })
  })

  describe("'invalid_fields'", () => {
    it('maxPriorityFeePerGas above maxFeePerGas', async () => {
      const raw = tamper(await signedEip1559(), (f) => {
        f[2] = bigBytes(10n ** 12n)
      })
      const error = expectReject(raw, 'invalid_fields')
      expect(error.message).toMatch(/maxPriorityFeePerGas \(1000000000000\) is greater than maxFeePerGas/)
    })

    it('gas limit below the intrinsic gas', async () => {
      const error = expectReject(await signedEip1559({ gas: 21_000n }), 'invalid_fields')
      expect(error.message).toMatch(/gas limit 21000 is below/)
    })

    it('to that is not 20 bytes', async () => {
      expectReject(tamper(await signedEip1559(), (f) => { f[5] = new Uint8Array(19).fill(1) }), 'invalid_fields')
    })

    it('access list entries with wrong lengths', async () => {
      expectReject(
        tamper(await signedEip1559(), (f) => { f[8] = [[new Uint8Array(19).fill(1), []]] }),
        'invalid_fields',
      )
      expectReject(
        tamper(await signedEip1559(), (f) => { f[8] = [[new Uint8Array(20).fill(1), [new Uint8Array(31)]]] }),
        'invalid_fields',
      )
    })

    it('EIP-7702 with an empty authorization list, or without to', async () => {
      const auth = await account.signAuthorization({ address: TOKEN, chainId: Number(DEV_CHAIN), nonce: 8 })
      const setCode = (await account.signTransaction({
        ...baseFields,
        type: 'eip7702',
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
        authorizationList: [auth],
      })) as Hex
      expect(ok(setCode).type).toBe(4)
      const empty = expectReject(tamper(setCode, (f) => { f[9] = [] }), 'invalid_fields')
      expect(empty.message).toMatch(/empty authorization list/)
      const create = expectReject(tamper(setCode, (f) => { f[5] = new Uint8Array() }), 'invalid_fields')
      expect(create.message).toMatch(/cannot create contracts/)
    })

    it('init code over the EIP-3860 limit (left to ethereumjs, message cleaned)', async () => {
      const raw = await signedEip1559({ to: undefined, data: `0x${'60'.repeat(49_153)}`, gas: 16_000_000n })
      const error = expectReject(raw, 'invalid_fields')
      expect(error.message).toMatch(/initcode size/)
      expect(error.message).not.toMatch(/tx type=/)
      expect(error.cause).toBeInstanceOf(Error)
    })
  })
})

describe('decoded transactions held by open submissions', () => {
  it('share one hidden class per type (no map and descriptor array of their own per transaction)', async () => {
    const raws = await Promise.all(
      Array.from({ length: 40 }, (_, nonce) =>
        account.signTransaction({ chainId: Number(DEV_CHAIN), type: 'eip1559', nonce, to: '0x000000000000000000000000000000000000dEaD', value: BigInt(nonce), gas: 100_000n, maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1n, data: '0x1234' }),
      ),
    )
    const decoded = raws.map((raw) => decodeSignedTransaction(raw, { chainId: DEV_CHAIN }))
    expect(decoded.map((tx) => tx.nonce)).toEqual(Array.from({ length: 40 }, (_, n) => BigInt(n)))
    expect(hiddenClassCount(decoded)).toBe(1)
  })
})
