/**
 * Sets the ERC-20 balance or allowance of any standard token in a simulation state, without a
 * table of known slots: run `balanceOf` / `allowance`, watch which storage slots of the token
 * it reads, and find the one that, when changed, changes the answer. When that slot is the
 * Solidity (keccak(key . slot)) or Vyper (keccak(slot . key)) mapping position of some base slot,
 * the layout is remembered per token so later holders need no probing.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import type { Address } from '../chain/types.ts'
import { keccak256 } from './keccak.ts'
import { setStorage } from './state-overrides.ts'
import { putWord, wordOfBytes } from './word-memory.ts'
import type { Simulator, SimulationState } from './simulator.ts'
import { BaseError } from '../primitives/base-error.ts'

const ERC20_ABI = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
])

/** Probe values unlikely to be anyone's real balance. */
const PROBE = 0x5eed_0000_0000_0000_0000_0000_0000_0000_cafen

export class Erc20SlotNotFoundError extends BaseError {
  override readonly name = 'Erc20SlotNotFoundError'
}

type MappingOrder = 'solidity' | 'vyper'
interface MappingLayout {
  baseSlot: bigint
  order: MappingOrder
}

/**
 * A token's balances layout and the slot of the holder written last: every quote funds the same
 * synthetic taker, so its slot (a keccak of the holder and the base slot) is kept, not hashed
 * again; one entry per token, inside the layouts' own bound
 */
interface BalanceLayout extends MappingLayout {
  last?: { holder: Address; slot: bigint }
}

/** A token's allowances layout and the slot of the (owner, spender) pair written last (two keccaks each), as BalanceLayout */
interface AllowanceLayout {
  outer: MappingLayout
  inner: MappingOrder
  last?: { owner: Address; spender: Address; slot: bigint }
}

const MAX_BASE_SLOT = 256n
const SYNTHETIC_CALLER: Address = '0x00000000000000000000000000000000005ea7c4'

/** keccak256 of the two words `abi.encodePacked(uint256, uint256)` gives, native where keccak.ts loads (every quote funds its taker through these slots) */
function mappingSlot(key: Address | bigint, base: bigint, order: MappingOrder): bigint {
  const k = typeof key === 'bigint' ? key : BigInt(key)
  const packed = new Uint8Array(64)
  const view = new DataView(packed.buffer)
  putWord(view, 0, order === 'solidity' ? k : base)
  putWord(view, 32, order === 'solidity' ? base : k)
  return wordOfBytes(keccak256(packed))
}

function findLayout(slot: bigint, key: Address | bigint): MappingLayout | undefined {
  for (let base = 0n; base < MAX_BASE_SLOT; base++) {
    if (mappingSlot(key, base, 'solidity') === slot) return { baseSlot: base, order: 'solidity' }
    if (mappingSlot(key, base, 'vyper') === slot) return { baseSlot: base, order: 'vyper' }
  }
  return undefined
}

export class Erc20StateWriter {
  /** token -> balances mapping layout; bounded by the number of tokens the service touches */
  private readonly balanceLayouts = new Map<Address, BalanceLayout>()
  private readonly allowanceLayouts = new Map<Address, AllowanceLayout>()

  constructor(
    private readonly simulator: Simulator,
    private readonly maxTokens = 10_000,
  ) {}

  /** Sets `holder`'s balance of `token` in `state` (which must be writable). */
  async setBalance(state: SimulationState, token: Address, holder: Address, amount: bigint): Promise<void> {
    const known = this.balanceLayouts.get(token)
    if (known) {
      let last = known.last
      if (last === undefined || last.holder !== holder) known.last = last = { holder, slot: mappingSlot(holder, known.baseSlot, known.order) }
      return setStorage(state, token, last.slot, amount)
    }
    const data = encodeFunctionData({ abi: ERC20_ABI, functionName: 'balanceOf', args: [holder] })
    const slot = await this.discover(state, token, data, 'balanceOf')
    const layout = findLayout(slot, holder)
    if (layout) this.remember(this.balanceLayouts, token, layout)
    await setStorage(state, token, slot, amount)
  }

  /** Sets the allowance `owner` gives `spender` on `token` in `state` (which must be writable). */
  async setAllowance(state: SimulationState, token: Address, owner: Address, spender: Address, amount: bigint): Promise<void> {
    const known = this.allowanceLayouts.get(token)
    if (known) {
      let last = known.last
      if (last === undefined || last.owner !== owner || last.spender !== spender) {
        const inner = mappingSlot(owner, known.outer.baseSlot, known.outer.order)
        known.last = last = { owner, spender, slot: mappingSlot(spender, inner, known.inner) }
      }
      return setStorage(state, token, last.slot, amount)
    }
    const data = encodeFunctionData({ abi: ERC20_ABI, functionName: 'allowance', args: [owner, spender] })
    const slot = await this.discover(state, token, data, 'allowance')
    for (const order of ['solidity', 'vyper'] as const) {
      for (let base = 0n; base < MAX_BASE_SLOT; base++) {
        const outerSlot = mappingSlot(owner, base, order)
        for (const inner of ['solidity', 'vyper'] as const) {
          if (mappingSlot(spender, outerSlot, inner) === slot) {
            this.remember(this.allowanceLayouts, token, { outer: { baseSlot: base, order }, inner })
            return setStorage(state, token, slot, amount)
          }
        }
      }
    }
    await setStorage(state, token, slot, amount)
  }

  private remember<V>(map: Map<Address, V>, token: Address, value: V) {
    if (map.size >= this.maxTokens) map.delete(map.keys().next().value as Address)
    map.set(token, value)
  }

  /**
   * The slot of `token` that the view call `data` returns. Probing runs on a scratch overlay over
   * the same pinned block, so the target state stays writable and untouched by probes.
   */
  private async discover(target: SimulationState, token: Address, data: `0x${string}`, fn: 'balanceOf' | 'allowance'): Promise<bigint> {
    const state = this.simulator.openState(target.reader, target.block)
    const reads: bigint[] = []
    const stop = state.overlay.observeStorageReads((address, slot) => {
      if (address === token && !reads.includes(slot)) reads.push(slot)
    })
    let before: bigint
    try {
      before = await this.view(state, token, data, fn)
    } finally {
      stop()
    }
    // the slot holding the answer is usually read last; try those first
    for (const slot of reads.reverse()) {
      const probeValue = before === PROBE ? PROBE + 1n : PROBE
      const probe = state.fork()
      await setStorage(probe, token, slot, probeValue)
      if ((await this.view(probe, token, data, fn)) === probeValue) return slot
    }
    throw new Erc20SlotNotFoundError(`cannot locate the ${fn} storage slot of token ${token}: it is not a standard ERC-20 storage layout`)
  }

  private async view(state: SimulationState, token: Address, data: `0x${string}`, fn: 'balanceOf' | 'allowance'): Promise<bigint> {
    const result = await this.simulator.call(state, { from: SYNTHETIC_CALLER, to: token, data, gasLimit: 1_000_000n })
    if (result.status !== 'success') {
      throw new Erc20SlotNotFoundError(`${fn} on ${token} failed (${result.revertReason ?? result.error ?? 'reverted'}): not an ERC-20 token`)
    }
    return decodeFunctionResult({ abi: ERC20_ABI, functionName: fn, data: `0x${Buffer.from(result.returnData).toString('hex')}` }) as bigint
  }
}
