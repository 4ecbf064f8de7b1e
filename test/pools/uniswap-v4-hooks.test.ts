/**
 * V4 hook permissions from a hook's address (v4-core Hooks.sol: the low 14 bits) and which of them
 * make a pool's swap math only an estimate.
 */
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { V4_HOOK_FLAGS, v4HookAddressProblem, v4HookAltersSwap, v4HookFlags, v4HookPermissions, type V4HookPermission } from '../../src/pools/uniswap-v4-hooks.ts'

const hookAt = (flags: number) => `0x${'12'.repeat(18)}${(0xc000 | flags).toString(16)}` as Address
const ZERO = '0x0000000000000000000000000000000000000000' as Address

describe('Uniswap V4 hook permissions', () => {
  it("reads v4-core's flag bits from the address's low 14 bits, ignoring the bits above", () => {
    // v4-core Hooks.sol: BEFORE_INITIALIZE_FLAG = 1 << 13 ... AFTER_REMOVE_LIQUIDITY_RETURNS_DELTA_FLAG = 1 << 0
    expect(V4_HOOK_FLAGS.beforeInitialize).toBe(0x2000)
    expect(V4_HOOK_FLAGS.beforeSwap).toBe(0x80)
    expect(V4_HOOK_FLAGS.afterSwap).toBe(0x40)
    expect(V4_HOOK_FLAGS.afterRemoveLiquidityReturnDelta).toBe(0x1)
    expect(v4HookFlags(hookAt(0x1080))).toBe(0x1080)
    expect(v4HookPermissions(hookAt(0x1080))).toEqual(['afterInitialize', 'beforeSwap'])
    expect(v4HookPermissions(hookAt(0x3fff))).toHaveLength(14)
    expect(v4HookPermissions(ZERO)).toEqual([])
  })

  it('models a hook that cannot change a swap (afterSwap alone, initialize, liquidity, donate) and only executes one that can (beforeSwap, swap return deltas)', () => {
    const modelled: V4HookPermission[] = ['beforeInitialize', 'afterInitialize', 'beforeAddLiquidity', 'afterAddLiquidity', 'beforeRemoveLiquidity', 'afterRemoveLiquidity', 'afterSwap', 'beforeDonate', 'afterDonate']
    const allModelled = modelled.reduce((f, p) => f | V4_HOOK_FLAGS[p], 0)
    expect(v4HookAltersSwap(hookAt(allModelled | V4_HOOK_FLAGS.afterAddLiquidityReturnDelta | V4_HOOK_FLAGS.afterRemoveLiquidityReturnDelta))).toBe(false)
    expect(v4HookAltersSwap(ZERO)).toBe(false)
    expect(v4HookAltersSwap(hookAt(V4_HOOK_FLAGS.beforeSwap))).toBe(true)
    expect(v4HookAltersSwap(hookAt(V4_HOOK_FLAGS.beforeSwap | V4_HOOK_FLAGS.beforeSwapReturnDelta))).toBe(true)
    expect(v4HookAltersSwap(hookAt(V4_HOOK_FLAGS.afterSwap | V4_HOOK_FLAGS.afterSwapReturnDelta))).toBe(true)
  })

  it("accepts and refuses (hooks, fee) pairs as Hooks.isValidHookAddress does", () => {
    expect(v4HookAddressProblem(ZERO, false)).toBeUndefined()
    expect(v4HookAddressProblem(ZERO, true)).toBe('a dynamic fee needs a hook contract')
    expect(v4HookAddressProblem(hookAt(0), true)).toBeUndefined()
    expect(v4HookAddressProblem(hookAt(0), false)).toBe('a hook contract with no permission bits needs a dynamic fee')
    expect(v4HookAddressProblem(hookAt(V4_HOOK_FLAGS.afterSwap | V4_HOOK_FLAGS.afterSwapReturnDelta), false)).toBeUndefined()
    expect(v4HookAddressProblem(hookAt(V4_HOOK_FLAGS.beforeSwapReturnDelta), true)).toMatch(/beforeSwapReturnDelta permission needs beforeSwap/)
  })
})
