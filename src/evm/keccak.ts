/**
 * keccak256 for the EVM (`Common.customCrypto.keccak256`, the KECCAK256 opcode, code hashes, mapping
 * slots): the one loader of src/crypto/keccak.ts (the `keccak` package's prebuilt N-API sponge when
 * it loads, else noble's JavaScript), which relay signatures and submission records use too. A warm
 * V3 swap hashes ~15 times, a quote's route more; native is ~1.5-3 us a hash against ~6-13 us.
 */
export { keccak256, nativeKeccak256 } from '../crypto/keccak.ts'
