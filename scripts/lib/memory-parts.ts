/**
 * Where a process's resident memory is, from /proc/<pid>/smaps (Linux, x64), in MB: which part
 * of the soak's service grows. The classes are read from the mappings' names and addresses, a
 * heuristic that holds for node 20 on x64 (no V8 pointer compression):
 * - v8_heap: anonymous mappings below 0x7f0000000000 (V8 maps its 256 KB heap pages and large
 *   objects at random addresses in the lower part of the address space; every isolate: the main
 *   thread, the pool's workers and the module-loader threads), and anonymous mappings that are
 *   readable, writable and executable wherever they lie: V8's code-space pages (240 KB between
 *   guard pages, carved from each isolate's code range high in the address space; until the
 *   fourteenth session they were counted as other_anon or, inside a 64 MB-aligned region, as
 *   malloc, so that the code V8 compiles during a soak looked like native growth);
 * - malloc: glibc's main arena ([heap], grown with brk) and its other arenas (anonymous mappings
 *   inside 64 MB-aligned regions high in the address space): native allocations of node, V8's
 *   own bookkeeping, LevelDB (memtable, block cache, open tables), undici, the addons;
 * - other_anon: the remaining anonymous mappings (thread stacks, mmap'ed large native buffers,
 *   [stack], [vdso]);
 * - files: mapped files (the node binary's code and data, shared libraries, the addons).
 */
import { readFileSync } from 'node:fs'

export interface MemoryParts {
  v8_heap: number
  malloc: number
  other_anon: number
  files: number
}

const MAPPING = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/
/** glibc's non-main arenas are HEAP_MAX_SIZE (64 MB on 64-bit) aligned */
const ARENA_ALIGN = 64n << 20n
/** below this, anonymous mappings are V8's (mmap's own placement starts near 0x7fff...) */
const V8_CEILING = 0x7f0000000000n

interface Mapping {
  start: bigint
  end: bigint
  perms: string
  name: string
  rssKb: number
}

function parse(smaps: string): Mapping[] {
  const mappings: Mapping[] = []
  let current: Mapping | undefined
  for (const line of smaps.split('\n')) {
    const m = MAPPING.exec(line)
    if (m !== null) {
      current = { start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), perms: m[3], name: m[4].trim(), rssKb: 0 }
      mappings.push(current)
    } else if (current !== undefined && line.startsWith('Rss:')) {
      current.rssKb = Number(line.split(/\s+/)[1])
    }
  }
  return mappings
}

/** The resident memory of `pid` by part, MB with one decimal; undefined when smaps cannot be read (not Linux, process gone). */
export function memoryParts(pid: number): MemoryParts | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8')
  } catch {
    return undefined
  }
  return partsOfSmaps(text)
}

/** The parts of one /proc/<pid>/smaps text (a copy taken earlier may be read again with it). */
export function partsOfSmaps(text: string): MemoryParts {
  const mappings = parse(text)
  const executable = (m: Mapping) => m.perms.startsWith('rwx')
  const arenas = new Set<bigint>()
  for (const m of mappings) {
    if (m.name === '' && !executable(m) && m.start >= V8_CEILING && m.start % ARENA_ALIGN === 0n && m.end - m.start <= ARENA_ALIGN) arenas.add(m.start)
  }
  const kb: MemoryParts = { v8_heap: 0, malloc: 0, other_anon: 0, files: 0 }
  for (const m of mappings) {
    if (m.name === '[heap]') kb.malloc += m.rssKb
    else if (m.name.startsWith('/')) kb.files += m.rssKb
    else if (m.name !== '') kb.other_anon += m.rssKb // [stack], [vdso], [anon:…]
    else if (m.start < V8_CEILING || executable(m)) kb.v8_heap += m.rssKb
    else if (arenas.has(m.start - (m.start % ARENA_ALIGN))) kb.malloc += m.rssKb
    else kb.other_anon += m.rssKb
  }
  const mb = (x: number) => Math.round(x / 102.4) / 10
  return { v8_heap: mb(kb.v8_heap), malloc: mb(kb.malloc), other_anon: mb(kb.other_anon), files: mb(kb.files) }
}
