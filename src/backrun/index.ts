/** Backrun search: candidate cycles through the pools a swap moved, and their optimal inputs by exact native math. */
export * from './cycle-search.ts'
export * from './optimal-input.ts'
export * from './profit-valuation.ts'
