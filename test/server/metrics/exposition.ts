/**
 * A strict reader of the Prometheus text format 0.0.4, for the metrics tests: HELP then TYPE
 * precede each family's samples, every sample line parses, each family appears once, and blank
 * lines (prom-client separates families with one) are the only other lines.
 */
import { expect } from 'vitest'

export interface Exposition {
  /** family name -> counter | gauge | histogram | summary | untyped */
  types: Map<string, string>
  /** series (name and labels exactly as written) -> value as written */
  samples: Map<string, string>
}

export function parseExposition(text: string): Exposition {
  expect(text.endsWith('\n')).toBe(true)
  const types = new Map<string, string>()
  const samples = new Map<string, string>()
  let current: string | undefined
  const lines = text.slice(0, -1).split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line === '') continue
    const help = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (help) {
      expect(types.has(help[1]), `family ${help[1]} twice`).toBe(false)
      const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(lines[++i] ?? '')
      expect(type?.[1], `TYPE after HELP for ${help[1]}`).toBe(help[1])
      types.set(help[1], type![2])
      current = help[1]
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*\})? (\S+)$/.exec(line)
    expect(sample, `bad line: ${line}`).not.toBeNull()
    const base = sample![1].replace(/_(bucket|sum|count)$/, '')
    expect(current === sample![1] || (['histogram', 'summary'].includes(types.get(current!)!) && current === base), `sample ${sample![1]} outside its family`).toBe(true)
    expect(sample![3]).toMatch(/^(-?\d+(\.\d+)?(e[+-]\d+)?|Nan|NaN|[+-]Inf)$/)
    samples.set(sample![1] + (sample![2] ?? ''), sample![3])
  }
  return { types, samples }
}

/** The value of one series, as a number; undefined when the scrape has no such series. */
export function sampleValue(exposition: Exposition, series: string): number | undefined {
  const v = exposition.samples.get(series)
  return v === undefined ? undefined : Number(v)
}

/** Expects these series to have these values (undefined: no such series), all compared at once. */
export function expectSamples(exposition: Exposition, expected: Record<string, number | undefined>): void {
  const actual = Object.fromEntries(Object.keys(expected).map((series) => [series, sampleValue(exposition, series)]))
  expect(actual).toEqual(expected)
}
