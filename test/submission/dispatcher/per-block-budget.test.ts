import { describe, expect, it } from 'vitest'

import { PerBlockBudget } from '../../../src/submission/dispatcher/per-block-budget.ts'

describe('PerBlockBudget', () => {
  it('allows max units per block and starts again at the next block', () => {
    const budget = new PerBlockBudget(2)
    expect([budget.spend(10n), budget.spend(10n), budget.spend(10n)]).toEqual([true, true, false])
    expect([budget.spend(11n), budget.spend(11n), budget.spend(11n)]).toEqual([true, true, false])
  })

  it('counts one block at a time: going back to an earlier block starts that block afresh', () => {
    const budget = new PerBlockBudget(1)
    expect(budget.spend(5n)).toBe(true)
    expect(budget.spend(6n)).toBe(true)
    expect(budget.spend(5n)).toBe(true)
    expect(budget.spend(5n)).toBe(false)
  })
})
