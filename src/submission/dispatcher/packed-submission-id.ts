/**
 * A submission id held compactly, for the windows that keep thousands of them for minutes
 * (RecentInclusions): its kind as one character and its 32-byte hash as 32 one-byte characters,
 * 33 characters in all, instead of the id's 77 (`private-tx:0x` and 64 hex digits). V8 keeps
 * either as a one-byte string (16 bytes of header): ~52 bytes instead of ~96 per id.
 *
 * An id of another shape (a hash that is not 32 bytes of lower-case hex) is kept as it is; the
 * packed form starts with a control character, which no id starts with, so the two never meet.
 */
import type { Hex } from '../../chain/types.ts'
import type { SubmissionId, SubmissionKind } from '../types.ts'

export type PackedSubmissionId = string & { readonly __packedSubmissionId: unique symbol }

const KINDS: readonly SubmissionKind[] = ['private-tx', 'bundle', 'notify']
/** the first character of a packed id: its kind's index + 1 */
const CODE_OF = new Map<string, number>(KINDS.map((kind, i) => [kind, i + 1]))
const HASH = /^0x[0-9a-f]{64}$/
const PACKED_LENGTH = 33

export function packSubmissionId(id: SubmissionId): PackedSubmissionId {
  const colon = id.indexOf(':')
  const code = CODE_OF.get(id.slice(0, colon))
  const hash = id.slice(colon + 1)
  if (code === undefined || !HASH.test(hash)) return id as string as PackedSubmissionId
  const bytes = Buffer.allocUnsafe(PACKED_LENGTH)
  bytes[0] = code
  bytes.write(hash.slice(2), 1, 'hex')
  // one flat string (code + text would be a cons string: another ~20 bytes and a second object)
  return bytes.toString('latin1') as PackedSubmissionId
}

export function unpackSubmissionId(packed: PackedSubmissionId): SubmissionId {
  const code = packed.charCodeAt(0)
  if (packed.length !== PACKED_LENGTH || code < 1 || code > KINDS.length) return packed as string as SubmissionId
  return `${KINDS[code - 1]}:0x${Buffer.from(packed.slice(1), 'latin1').toString('hex')}` as `${SubmissionKind}:${Hex}`
}
