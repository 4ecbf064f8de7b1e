/** Routing: the split / multi-hop route search over the pools of one block (from src/pools), the swap plan it produces, and its gas model. */
export * from './swap-plan.ts'
export * from './gas-model.ts'
export * from './split-allocator.ts'
export * from './route-search.ts'
export * from './routing-engine.ts'
