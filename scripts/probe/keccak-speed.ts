/**
 * What one keccak256 costs in each implementation this repository has used, on this machine:
 * src/crypto/keccak.ts (hash-wasm's WebAssembly), noble's JavaScript (its fallback), and the
 * `keccak` package's native N-API binding where it still loads (no longer a dependency of ours:
 * it is in node_modules for Hardhat; a thread terminated inside its calls aborts the process,
 * test/crypto/thread-termination.e2e.test.ts). Per input size (KECCAK_SPEED_SIZES, bytes, default
 * 32,64,128,1024): `KECCAK_SPEED_WARM` (20,000) hashes, then `KECCAK_SPEED_COUNT` (200,000; an
 * eighth for inputs over 200 bytes) timed, the three in turn, each digest checked against noble's.
 * Prints one line per size and implementation, then one JSON object (us per hash).
 */
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { wasmKeccak256, type Keccak256 } from '../../src/crypto/keccak.ts'

interface NativeSponge {
  initialize(rate: number, capacity: number): void
  absorb(data: Uint8Array): void
  absorbLastFewBits(bits: number): void
  squeeze(length: number): Uint8Array
}

function nativeBinding(): Keccak256 | undefined {
  try {
    const require = createRequire(import.meta.url)
    const build = require('node-gyp-build') as (dir: string) => new () => NativeSponge
    const sponge = new (build(dirname(require.resolve('keccak/package.json'))))()
    return (data) => {
      sponge.initialize(1088, 512)
      sponge.absorb(data)
      sponge.absorbLastFewBits(0x01)
      return sponge.squeeze(32)
    }
  } catch {
    return undefined
  }
}

function positiveInts(name: string, fallback: string): number[] {
  const values = (process.env[name] ?? fallback).split(',').map(Number)
  if (values.some((v) => !Number.isInteger(v) || v < 0)) throw new Error(`${name} must be non-negative integers separated by commas`)
  return values
}

const sizes = positiveInts('KECCAK_SPEED_SIZES', '32,64,128,1024')
const [warm] = positiveInts('KECCAK_SPEED_WARM', '20000')
const [count] = positiveInts('KECCAK_SPEED_COUNT', '200000')
const implementations: Array<[string, Keccak256 | undefined]> = [
  ['wasm', wasmKeccak256],
  ['noble', (data) => keccak_256(data)],
  ['native', nativeBinding()],
]
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')
const result: Record<string, Record<string, number>> = {}
for (const size of sizes) {
  const data = Uint8Array.from({ length: size }, (_, i) => (i * 7 + 3) & 0xff)
  const expected = hex(keccak_256(data))
  const n = size > 200 ? Math.max(1, Math.floor(count / 8)) : count
  for (const [name, hash] of implementations) {
    if (hash === undefined) continue
    if (hex(hash(data)) !== expected) throw new Error(`${name} gives a wrong digest for ${size} bytes`)
    for (let i = 0; i < warm; i++) hash(data)
    const started = process.hrtime.bigint()
    for (let i = 0; i < n; i++) hash(data)
    const us = Number(process.hrtime.bigint() - started) / n / 1000
    ;(result[name] ??= {})[String(size)] = Number(us.toFixed(3))
    console.log(`${size} bytes ${name}: ${us.toFixed(3)} us a hash`)
  }
}
console.log(JSON.stringify(result))
