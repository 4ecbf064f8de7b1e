/**
 * keccak256 for the EVM (`Common.customCrypto.keccak256`, the KECCAK256 opcode, code hashes, mapping
 * slots): the one loader of src/crypto/keccak.ts (hash-wasm's WebAssembly Keccak, else noble's
 * JavaScript), which relay signatures and submission records use too. A warm V3 swap hashes ~15
 * times, a quote's route more; WebAssembly is ~0.9-1.1 us a hash of up to 128 bytes against ~7-9 us.
 */
export { keccak256, wasmKeccak256 } from '../crypto/keccak.ts'
