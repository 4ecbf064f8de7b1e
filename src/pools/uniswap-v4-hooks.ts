/**
 * Uniswap V4 hook permissions, as the PoolManager reads them: the low 14 bits of the hook
 * contract's address (v4-core src/libraries/Hooks.sol), and what each means for the quote search.
 *
 * A swap's amounts depend on its hook only through four permissions:
 *   - beforeSwap: the hook runs first and may change the pool (swap, modify liquidity), revert, or
 *     return an LP-fee override for this swap alone (dynamic-fee pools);
 *   - beforeSwapReturnDelta / afterSwapReturnDelta: the hook takes or gives part of the amounts;
 *   - (afterSwap alone runs after the pool's amounts are fixed and cannot change what the swapper
 *     pays or receives: without its return-delta flag its answer is ignored.)
 * A pool whose hook holds none of the first three is quoted with the exact math (`modelled`), with
 * a dynamic fee read from slot0 (what the hook or its owner last set through updateDynamicLPFee).
 * Any other pool is `executed`: the search ranks it with an estimate (the same math at slot0's fee)
 * and only executing the route in the EVM gives its amounts. The initialize, liquidity and donate
 * permissions never run during a swap.
 */
import type { Address } from '../chain/types.ts'

export const V4_HOOK_FLAGS = Object.freeze({
  beforeInitialize: 1 << 13,
  afterInitialize: 1 << 12,
  beforeAddLiquidity: 1 << 11,
  afterAddLiquidity: 1 << 10,
  beforeRemoveLiquidity: 1 << 9,
  afterRemoveLiquidity: 1 << 8,
  beforeSwap: 1 << 7,
  afterSwap: 1 << 6,
  beforeDonate: 1 << 5,
  afterDonate: 1 << 4,
  beforeSwapReturnDelta: 1 << 3,
  afterSwapReturnDelta: 1 << 2,
  afterAddLiquidityReturnDelta: 1 << 1,
  afterRemoveLiquidityReturnDelta: 1 << 0,
})

export type V4HookPermission = keyof typeof V4_HOOK_FLAGS

/** Hooks.ALL_HOOK_MASK */
export const V4_ALL_HOOK_MASK = (1 << 14) - 1
/** the permissions that can change a swap's amounts or fee: a pool whose hook holds one is executed, not modelled */
export const V4_SWAP_ALTERING_PERMISSIONS: readonly V4HookPermission[] = ['beforeSwap', 'beforeSwapReturnDelta', 'afterSwapReturnDelta']

/** a return-delta permission is valid only beside its action's (Hooks.isValidHookAddress) */
const RETURN_DELTA_NEEDS: ReadonlyArray<readonly [V4HookPermission, V4HookPermission]> = [
  ['beforeSwapReturnDelta', 'beforeSwap'],
  ['afterSwapReturnDelta', 'afterSwap'],
  ['afterAddLiquidityReturnDelta', 'afterAddLiquidity'],
  ['afterRemoveLiquidityReturnDelta', 'afterRemoveLiquidity'],
]

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** the permission bits of a hook address */
export function v4HookFlags(hooks: Address): number {
  return Number(BigInt(hooks) & BigInt(V4_ALL_HOOK_MASK))
}

/** the permissions a hook address grants, in v4-core's order */
export function v4HookPermissions(hooks: Address): V4HookPermission[] {
  const flags = v4HookFlags(hooks)
  return (Object.keys(V4_HOOK_FLAGS) as V4HookPermission[]).filter((p) => (flags & V4_HOOK_FLAGS[p]) !== 0)
}

/**
 * Why the PoolManager would refuse this (hooks, dynamic fee) pair in a key (Hooks.isValidHookAddress),
 * or undefined when it accepts it: a return-delta flag without its action's flag; no hooks with a
 * dynamic fee; a hook with no permission and a static fee.
 */
export function v4HookAddressProblem(hooks: Address, dynamicFee: boolean): string | undefined {
  const flags = v4HookFlags(hooks)
  for (const [delta, action] of RETURN_DELTA_NEEDS) {
    if ((flags & V4_HOOK_FLAGS[delta]) !== 0 && (flags & V4_HOOK_FLAGS[action]) === 0) return `the ${delta} permission needs ${action} (the address's low bits)`
  }
  if (hooks.toLowerCase() === ZERO_ADDRESS) return dynamicFee ? 'a dynamic fee needs a hook contract' : undefined
  if (flags === 0 && !dynamicFee) return 'a hook contract with no permission bits needs a dynamic fee'
  return undefined
}

/** true when the hook can change a swap's amounts or fee (V4_SWAP_ALTERING_PERMISSIONS): the pool is executed, not modelled */
export function v4HookAltersSwap(hooks: Address): boolean {
  const flags = v4HookFlags(hooks)
  return V4_SWAP_ALTERING_PERMISSIONS.some((p) => (flags & V4_HOOK_FLAGS[p]) !== 0)
}

/** how many calls the PoolManager makes into the hook during a swap: beforeSwap and afterSwap, each if permitted */
export function v4HookSwapCalls(hooks: Address): number {
  const flags = v4HookFlags(hooks)
  return ((flags & V4_HOOK_FLAGS.beforeSwap) !== 0 ? 1 : 0) + ((flags & V4_HOOK_FLAGS.afterSwap) !== 0 ? 1 : 0)
}
