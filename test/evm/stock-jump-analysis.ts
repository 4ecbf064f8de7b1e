/**
 * The stock `_getValidJumpDestinations` of @ethereumjs/evm 10 for legacy code (no EIP-8024),
 * written out for the inline batch's tests: its `jumps` (1 at each JUMPDEST that is an
 * instruction) and its `pushes` (each PUSH's word at the offset of its data, a PUSH cut short by
 * the end padded on the right).
 */
export function stockAnalysis(code: Uint8Array): { jumps: Uint8Array; pushes: Record<number, bigint> } {
  const jumps = new Uint8Array(code.length)
  const pushes: Record<number, bigint> = {}
  for (let i = 0; i < code.length; i++) {
    const op = code[i]
    if (op >= 0x60 && op <= 0x7f) {
      const n = op - 0x5f
      const bytes = new Uint8Array(n)
      bytes.set(code.subarray(i + 1, i + 1 + n))
      pushes[i + 1] = BigInt('0x' + (Buffer.from(bytes).toString('hex') || '0'))
      i += n
    } else if (op === 0x5b) {
      jumps[i] = 1
    }
  }
  return { jumps, pushes }
}
