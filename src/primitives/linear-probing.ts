/**
 * The two steps of an open-addressing hash index over fixed slots (linear probing, no tombstones)
 * that the fixed-memory windows share (the dispatcher's recent inclusions, the inclusion index):
 * where a 32-byte key starts its probe, and how a cell is emptied without breaking the probes of
 * the entries after it. Their tables are typed arrays allocated up front: `cells` maps a cell to
 * slot + 1 (0: empty), `homes` a slot to the cell its key starts from.
 */

/** bytes of the keys these indexes hold: transaction and submission hashes */
export const KEY_BYTES = 32

/**
 * The cell a 32-byte key starts from: every 4-byte word of it mixed (keys need not be uniform in
 * any one part), masked to the table (a power of two).
 */
export function homeCell(key: Uint8Array, offset: number, cellMask: number): number {
  let h = 0
  for (let i = 0; i < KEY_BYTES; i += 4) {
    const word = (key[offset + i] | (key[offset + i + 1] << 8) | (key[offset + i + 2] << 16) | (key[offset + i + 3] << 24)) >>> 0
    h = Math.imul(h ^ word, 0x9e3779b1)
  }
  return (h ^ (h >>> 16)) & cellMask
}

/** The smallest power of two of at least twice `slots` cells: at most half of them in use, so probes stay short. */
export function cellCountFor(slots: number): number {
  let cells = 2
  while (cells < slots * 2) cells *= 2
  return cells
}

/**
 * Empties index cell `hole`, moving back the entries after it that would otherwise no longer be
 * found from their home cell (deletion in linear probing without tombstones, so that lookups
 * never slow down with use).
 */
export function unlinkCell(cells: Int32Array, cellMask: number, homes: Uint32Array, hole: number): void {
  let gap = hole
  let cell = hole
  for (;;) {
    cell = (cell + 1) & cellMask
    const entry = cells[cell]
    if (entry === 0) break
    const home = homes[entry - 1]
    // the entry stays where it is when its home lies cyclically in (gap, cell]
    const stays = gap <= cell ? gap < home && home <= cell : gap < home || home <= cell
    if (stays) continue
    cells[gap] = entry
    gap = cell
  }
  cells[gap] = 0
}
