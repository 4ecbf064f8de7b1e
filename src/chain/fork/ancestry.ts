/**
 * Where a new head's chain meets the chain the fork followed so far: compares the new chain's
 * hashes with the recorded ones (BlockHashRecord), from the newest number both have downwards,
 * until they agree (the common ancestor).
 *
 * What it costs: nothing in the usual cases, since a header names its parent: a head on top of
 * the previous one (its parentHash is the recorded head), a head replaced at the same height (its
 * parent is the recorded parent). A reorg d blocks deep costs d - 1 header reads, one after the
 * other (each read header names the next parent down). A head more than one block above the
 * recorded ones costs one batch of the headers in between (they are linked by their parent
 * hashes, so a chain that moved while they were read is noticed).
 *
 * The common ancestor is undefined when the chains cannot be compared: nothing recorded, a gap or
 * a reorg deeper than `maxDepth` (then `diverged` is true). The caller then cannot trust any
 * recorded hash.
 */
import { BaseError } from '../../primitives/base-error.ts'
import type { BlockInfo, Hex } from '../types.ts'

export interface AncestryResult {
  /** the newest block both chains hold; undefined when they could not be compared */
  commonAncestor: { number: bigint; hash: Hex } | undefined
  /** a recorded hash differs from the new chain's at the same number: blocks were replaced */
  diverged: boolean
  /** the new chain's headers read on the way (the new head's ancestors), newest first */
  headers: BlockInfo[]
}

/** The upstream's chain changed while its headers were being read: check again at the next head. */
export class ChainMovedError extends BaseError {
  override readonly name = 'ChainMovedError'
}

export interface AncestryInput {
  head: BlockInfo
  /** the hash recorded for a number, if any */
  known(number: bigint): Hex | undefined
  /** the newest number recorded */
  newestKnown: bigint | undefined
  /** reads headers by number (one batch) */
  readHeaders(numbers: readonly bigint[]): Promise<BlockInfo[]>
  /** deepest reorg and widest gap looked through */
  maxDepth: number
}

export async function findCommonAncestor(input: AncestryInput): Promise<AncestryResult> {
  const { head, known, newestKnown, maxDepth } = input
  const headers: BlockInfo[] = []
  if (newestKnown === undefined) return { commonAncestor: undefined, diverged: false, headers }
  /** the new chain's hash by number */
  const theirs = new Map<bigint, Hex>()
  const learn = (block: BlockInfo) => {
    const expected = theirs.get(block.number)
    if (expected !== undefined && expected !== block.hash) {
      throw new ChainMovedError(`block ${block.number} is ${block.hash}, but the newer header read before names ${expected} as its ancestor`)
    }
    theirs.set(block.number, block.hash)
    if (block.parentHash !== undefined && block.number > 0n) {
      const parent = theirs.get(block.number - 1n)
      if (parent !== undefined && parent !== block.parentHash) {
        throw new ChainMovedError(`block ${block.number - 1n} is ${parent}, but block ${block.number} names ${block.parentHash} as its parent`)
      }
      theirs.set(block.number - 1n, block.parentHash)
    }
  }
  const read = async (numbers: bigint[]) => {
    // newest first, so each header's parent link is checked against the one above it
    const blocks = (await input.readHeaders(numbers)).sort((a, b) => (a.number > b.number ? -1 : 1))
    for (const block of blocks) {
      learn(block)
      headers.push(block)
    }
  }
  learn(head)

  let k = head.number < newestKnown ? head.number : newestKnown
  // the new head is more than one block above everything recorded: read the blocks in between
  if (!theirs.has(k)) {
    if (head.number - k > BigInt(maxDepth)) return { commonAncestor: undefined, diverged: false, headers }
    const between: bigint[] = []
    for (let n = head.number - 1n; n >= k; n--) between.push(n)
    await read(between)
  }
  for (let depth = 0; ; depth++) {
    if (depth > maxDepth || k < 0n) return { commonAncestor: undefined, diverged: depth > 0, headers }
    const ours = known(k)
    let hash = theirs.get(k)
    if (hash === undefined) {
      // only when a header came without its parent hash: read this one by number
      await read([k])
      hash = theirs.get(k)
      if (hash === undefined) throw new ChainMovedError(`block ${k} could not be read`)
    }
    // nothing recorded this far down: the replaced blocks, if any, are all above
    if (ours === undefined || ours === hash) return { commonAncestor: { number: k, hash }, diverged: depth > 0, headers }
    // block k was replaced: learn the new chain's block k - 1 from block k's header
    if (k > 0n && !theirs.has(k - 1n)) await read([k])
    k--
  }
}
