/**
 * JSON for stored values. bigint (amounts, block numbers) is written as {"$bigint":"<decimal>"}
 * and read back as bigint, so no amount ever passes through Number.
 */

const BIGINT_TAG = '$bigint'

export function encodeJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? { [BIGINT_TAG]: v.toString() } : v))
}

export function decodeJson<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v)
      if (keys.length === 1 && keys[0] === BIGINT_TAG) {
        const digits = (v as Record<string, unknown>)[BIGINT_TAG]
        if (typeof digits === 'string' && /^-?\d+$/.test(digits)) return BigInt(digits)
      }
    }
    return v
  }) as T
}
