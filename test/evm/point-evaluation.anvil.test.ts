/**
 * The point-evaluation precompile (0x0a, EIP-4844) through the project's EVM, with the real KZG
 * and the mainnet trusted setup (src/evm/kzg.ts), on the official vectors: the c-kzg /
 * consensus-spec `verify_kzg_proof` cases as execution-spec-tests filled them
 * (fixtures/state-tests/Pyspecs/cancun/eip4844_blobs/point_evaluation_precompile_external_vectors.json;
 * the state-test suite checks their post-state roots, this file the precompile's own answer):
 * - a valid proof returns FIELD_ELEMENTS_PER_BLOB (4096) and BLS_MODULUS, for exactly 50,000 gas,
 * - an invalid proof, or malformed input, fails with all the gas given consumed,
 * and the same answers from anvil (an independent EVM) for a sample of them.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilReceipt, anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import { bytesToHexString, hexToBytesStrict } from '../../src/chain/quantity.ts'
import type { Address, Hex } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { mainnetKzgLoaded } from '../../src/evm/kzg.ts'
import { Simulator, type SimulationState } from '../../src/evm/simulator.ts'

const VECTORS_FILE = join(
  import.meta.dirname,
  '../../fixtures/state-tests/Pyspecs/cancun/eip4844_blobs/point_evaluation_precompile_external_vectors.json',
)
const POINT_EVALUATION: Address = '0x000000000000000000000000000000000000000a'
const CALLER: Address = '0x00000000000000000000000000000000000c0de5'
const PRECOMPILE_GAS = 50_000n
const BLS_MODULUS = 52435875175126190479447740508185965837690552500527637822603658699938581184513n
const SUCCESS_OUTPUT = `0x${(4096n).toString(16).padStart(64, '0')}${BLS_MODULUS.toString(16).padStart(64, '0')}`

interface Vector {
  name: string
  input: Hex
  valid: boolean
}

/** Every vector of the filled file: the transaction's data is the precompile's 192-byte input. */
function vectors(): Vector[] {
  const doc = JSON.parse(readFileSync(VECTORS_FILE, 'utf8')) as Record<string, { transaction: { data: Hex[] } }>
  return Object.entries(doc).map(([id, test]) => {
    const name = /verify_kzg_proof_case_[\w]+/.exec(id)?.[0] ?? id
    // correct_proof_* (incl. the points at infinity) verify; incorrect_proof_* and invalid_* do not
    return { name, input: test.transaction.data[0], valid: name.startsWith('verify_kzg_proof_case_correct_proof') }
  })
}

/** Intrinsic gas of a call carrying `data` (Cancun: 21,000 + 4 per zero byte + 16 per other byte). */
function intrinsicGas(data: Hex): bigint {
  let gas = 21_000n
  for (const byte of hexToBytesStrict(data)) gas += byte === 0 ? 4n : 16n
  return gas
}

const VECTORS = vectors()
const common = commonForChain(1n, 'cancun')
const simulator = new Simulator({ common })

function cancunState(): SimulationState {
  // an empty world; the call executes in the block after this one (Cancun, base fee 7, no blobs)
  const head = { ...EMPTY_STATE_READER.block, number: 1n, timestamp: 1_000n, baseFeePerGas: 7n, excessBlobGas: 0n }
  return simulator.openState(new MemoryStateReader(head, new Map()))
}

async function evaluate(input: Hex, precompileGas: bigint) {
  const gasLimit = intrinsicGas(input) + precompileGas
  const result = await simulator.call(cancunState(), { from: CALLER, to: POINT_EVALUATION, data: input, gasLimit })
  return { result, gasLimit, intrinsic: intrinsicGas(input) }
}

describe('point evaluation (0x0a) with the mainnet trusted setup', () => {
  it('holds the official vectors, valid and invalid', () => {
    expect(VECTORS.length).toBe(122)
    expect(VECTORS.filter((v) => v.valid).length).toBe(54)
  })

  it('builds the trusted setup only when a proof is first verified', async () => {
    expect(mainnetKzgLoaded()).toBe(false)
    const { result } = await evaluate(VECTORS[0].input, PRECOMPILE_GAS)
    expect(result.status).toBe(VECTORS[0].valid ? 'success' : 'halted')
    expect(mainnetKzgLoaded()).toBe(true)
  })

  it.each(VECTORS.map((v) => [v.name, v] as const))('%s', async (_name, vector) => {
    // 1,000 gas more than the precompile costs: a failure must consume it too
    const { result, gasLimit, intrinsic } = await evaluate(vector.input, PRECOMPILE_GAS + 1_000n)
    if (vector.valid) {
      expect(result.status).toBe('success')
      expect(bytesToHexString(result.returnData)).toBe(SUCCESS_OUTPUT)
      expect(result.gasUsed).toBe(intrinsic + PRECOMPILE_GAS)
    } else {
      expect(result.status).toBe('halted')
      expect(result.returnData.length).toBe(0)
      expect(result.gasUsed).toBe(gasLimit)
    }
  })

  // The "four gas_usage cases differ by exactly 1 gas": the execution-spec-tests give a
  // correct proof 50,001 gas. A verifier that fails (the former stub threw) consumes all 50,001;
  // the precompile charges exactly 50,000 for a valid proof.
  it('charges exactly 50,000 for a valid proof given 50,001 gas (the 1-gas difference)', async () => {
    const valid = VECTORS.find((v) => v.valid) as Vector
    const { result, intrinsic } = await evaluate(valid.input, PRECOMPILE_GAS + 1n)
    expect(result.status).toBe('success')
    expect(result.gasUsed - intrinsic).toBe(PRECOMPILE_GAS)
  })

  it('fails a valid proof given 49,999 gas, consuming it all', async () => {
    const valid = VECTORS.find((v) => v.valid) as Vector
    const { result, gasLimit } = await evaluate(valid.input, PRECOMPILE_GAS - 1n)
    expect(result.status).toBe('halted')
    expect(result.gasUsed).toBe(gasLimit)
  })

  it('fails input that is not 192 bytes, and a commitment that does not match the versioned hash', async () => {
    const valid = VECTORS.find((v) => v.valid) as Vector
    const short = await evaluate(valid.input.slice(0, -2) as Hex, PRECOMPILE_GAS + 1_000n)
    expect(short.result.status).toBe('halted')
    expect(short.result.gasUsed).toBe(short.gasLimit)
    // flip one bit of the versioned hash's last byte
    const bytes = hexToBytesStrict(valid.input)
    bytes[31] ^= 1
    const wrongHash = await evaluate(bytesToHexString(bytes), PRECOMPILE_GAS + 1_000n)
    expect(wrongHash.result.status).toBe('halted')
    expect(wrongHash.result.gasUsed).toBe(wrongHash.gasLimit)
  })
})

describe('point evaluation: the same answers as anvil', () => {
  let anvil: AnvilInstance
  let from: string
  beforeAll(async () => {
    anvil = await startAnvil({ hardfork: 'cancun' })
    from = (await anvilRpc<string[]>(anvil.url, 'eth_accounts'))[0]
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  // a sample: valid proofs, points at infinity, incorrect proofs and each kind of invalid input
  const sample = ['correct_proof_0', 'correct_proof_point_at_infinity_for_zero', 'incorrect_proof_0', 'incorrect_proof_point_at_infinity', 'invalid_y', 'invalid_z', 'invalid_commitment', 'invalid_proof']
    .map((prefix) => VECTORS.find((v) => v.name.startsWith(`verify_kzg_proof_case_${prefix}`)) as Vector)

  it.each(sample.map((v) => [v.name, v] as const))('%s', async (_name, vector) => {
    const gasLimit = intrinsicGas(vector.input) + PRECOMPILE_GAS + 1_000n
    const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [
      { from, to: POINT_EVALUATION, data: vector.input, gas: `0x${gasLimit.toString(16)}` },
    ])
    // generous: anvil loads its own trusted setup on its first proof, on a busy 2-core machine
    const receipt = await anvilReceipt(anvil.url, hash, 60_000)
    const ours = await evaluate(vector.input, PRECOMPILE_GAS + 1_000n)
    expect(ours.result.status === 'success' ? '0x1' : '0x0').toBe(receipt.status)
    expect(ours.result.gasUsed).toBe(BigInt(receipt.gasUsed))
    if (vector.valid) {
      const output = await anvilRpc<Hex>(anvil.url, 'eth_call', [{ from, to: POINT_EVALUATION, data: vector.input, gas: `0x${gasLimit.toString(16)}` }])
      expect(bytesToHexString(ours.result.returnData)).toBe(output)
    }
  })
})
