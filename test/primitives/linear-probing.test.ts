import { describe, expect, it } from 'vitest'

import { KEY_BYTES, cellCountFor, homeCell, unlinkCell } from '../../src/primitives/linear-probing.ts'

describe('linear probing over fixed slots', () => {
  it('sizes the index at least twice the slots, a power of two', () => {
    expect([1, 2, 3, 1_000, 16_384].map(cellCountFor)).toEqual([2, 4, 8, 2_048, 32_768])
  })

  it('homeCell mixes every word of the key (keys differing in any one byte land apart), within the mask', () => {
    const key = new Uint8Array(KEY_BYTES * 2)
    const homes = new Set<number>()
    // with a 31-bit mask: every byte changes the home (no part of the key is ignored)
    const wide = 0x7fff_ffff
    const base = homeCell(key, KEY_BYTES, wide)
    for (let i = 0; i < KEY_BYTES; i++) {
      key[KEY_BYTES + i] = 1
      homes.add(homeCell(key, KEY_BYTES, wide))
      const home = homeCell(key, KEY_BYTES, 1_023)
      expect(home).toBeGreaterThanOrEqual(0)
      expect(home).toBeLessThan(1_024)
      key[KEY_BYTES + i] = 0
    }
    expect(homes.size).toBe(KEY_BYTES)
    expect(homes.has(base)).toBe(false)
    // the offset is honoured: the first key's bytes do not count
    key[0] = 9
    expect(homeCell(key, KEY_BYTES, wide)).toBe(base)
  })

  it('unlinkCell keeps every other entry reachable from its home, across the table\'s wrap', () => {
    // 8 cells; slots 0-5 all start near the end, so their run wraps to the front
    const cellMask = 7
    const homes = Uint32Array.from([6, 6, 7, 7, 0, 6])
    const insert = (cells: Int32Array, slot: number) => {
      let cell = homes[slot]
      while (cells[cell] !== 0) cell = (cell + 1) & cellMask
      cells[cell] = slot + 1
    }
    const find = (cells: Int32Array, slot: number) => {
      for (let cell = homes[slot]; ; cell = (cell + 1) & cellMask) {
        if (cells[cell] === 0) return -1
        if (cells[cell] === slot + 1) return cell
      }
    }
    for (let removed = 0; removed < homes.length; removed++) {
      const cells = new Int32Array(8)
      for (let slot = 0; slot < homes.length; slot++) insert(cells, slot)
      unlinkCell(cells, cellMask, homes, find(cells, removed))
      for (let slot = 0; slot < homes.length; slot++) expect(find(cells, slot) >= 0, `slot ${slot} after removing ${removed}`).toBe(slot !== removed)
      expect(cells.filter((c) => c !== 0)).toHaveLength(homes.length - 1)
    }
  })
})
