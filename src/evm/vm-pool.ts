/**
 * A bounded pool of ethereumjs VMs for one chain configuration. Creating a VM costs about 0.5 ms
 * (opcode tables, precompiles), a large share of a 2 ms swap simulation, so VMs are reused: each
 * is bound to one simulation's state overlay at a time and never shared by two simulations.
 *
 * Bounds: at most `maxIdle` VMs wait idle, and at most `maxLive` exist at once (idle or working);
 * a simulation beyond that waits for one to come back (FIFO).
 *
 * Why discarding needs care: every EVM registers a `hardforkChanged` listener on the Common it is
 * created with (`@ethereumjs/evm` evm.js), and that Common is the simulator's, shared by all VMs.
 * A VM that is merely dropped therefore stays reachable from `Common.events` forever, with its
 * state and its jump-analysis cache (~53 KB cold, ~1 MB warm): under a flow of rejected
 * transactions that leaked one VM per rejection and killed the process. A discarded VM's listener
 * is removed here, so nothing outside the pool keeps it.
 */
import type { Common } from '@ethereumjs/common'
import { createVM, type VM } from '@ethereumjs/vm'
import { JournaledState } from './journaled-state.ts'
import { applyInterpreterPatches, patchEvmInstance } from './interpreter-patches.ts'
import { EMPTY_STATE_READER } from './empty-state.ts'
import { ReaderBlockHashes } from './reader-block-hashes.ts'
import { setExecutionDeadline, type ExecutionLimits } from './execution-budget.ts'

const HARDFORK_CHANGED = 'hardforkChanged'

export type Listener = (...args: unknown[]) => void

interface PooledVm {
  vm: VM
  /** the listeners this VM's EVM added to the shared Common, removed when the VM is discarded */
  listeners: Listener[]
}

export interface VmPoolStats {
  idle: number
  live: number
  waiting: number
  created: number
  discarded: number
}

export class VmPool {
  private readonly idle: PooledVm[] = []
  private readonly waiting: Array<() => void> = []
  private live = 0
  private created = 0
  private discarded = 0

  constructor(
    readonly common: Common,
    /** VMs kept idle at most */
    private readonly maxIdle = 16,
    /** VMs in existence at most (idle and working); simulations beyond it wait */
    private readonly maxLive = 64,
  ) {
    if (!Number.isSafeInteger(maxIdle) || maxIdle < 0) throw new RangeError(`VmPool: maxIdle must be a non-negative integer, got ${maxIdle}`)
    if (!Number.isSafeInteger(maxLive) || maxLive < 1) throw new RangeError(`VmPool: maxLive must be a positive integer, got ${maxLive}`)
  }

  /**
   * Runs `work` with a VM bound to `state`, then returns the VM to the pool. With `limits`, the
   * execution's wall-clock budget starts now (the wait for a VM is not part of it): the deadline is
   * set on this VM's EVM for as long as `work` runs (execution-budget.ts).
   */
  async with<T>(state: JournaledState, work: (vm: VM) => Promise<T>, limits?: ExecutionLimits): Promise<T> {
    const pooled = await this.acquire()
    bind(pooled.vm, state)
    setExecutionDeadline(pooled.vm.evm, limits)
    let result: T
    try {
      result = await work(pooled.vm)
    } catch (err) {
      // runTx reverts its own checkpoint on a rejection, but an exception thrown from deeper (an
      // upstream read failing mid-execution, an execution stopped by its budget) may leave a
      // half-unwound EVM journal: never reuse it.
      setExecutionDeadline(pooled.vm.evm, undefined)
      this.discard(pooled)
      throw err
    }
    setExecutionDeadline(pooled.vm.evm, undefined)
    this.release(pooled)
    return result
  }

  stats(): VmPoolStats {
    return { idle: this.idle.length, live: this.live, waiting: this.waiting.length, created: this.created, discarded: this.discarded }
  }

  private async acquire(): Promise<PooledVm> {
    for (;;) {
      const idle = this.idle.pop()
      if (idle !== undefined) return idle
      if (this.live < this.maxLive) {
        this.live++
        try {
          return await this.create()
        } catch (err) {
          this.live--
          this.wakeOne()
          throw err
        }
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
  }

  private release(pooled: PooledVm): void {
    if (this.idle.length < this.maxIdle) {
      // an idle VM must not keep the finished simulation's overlay (and what it read) alive
      bind(pooled.vm, JournaledState.over(EMPTY_STATE_READER))
      this.idle.push(pooled)
    } else {
      this.drop(pooled)
    }
    this.wakeOne()
  }

  private discard(pooled: PooledVm): void {
    this.drop(pooled)
    this.wakeOne()
  }

  private drop(pooled: PooledVm): void {
    removeCommonListeners(this.common, pooled.listeners)
    pooled.listeners.length = 0
    this.live--
    this.discarded++
  }

  private wakeOne(): void {
    this.waiting.shift()?.()
  }

  /** Creations run one at a time, so the listeners added during one belong to that VM alone. */
  private creating: Promise<unknown> = Promise.resolve()

  private create(): Promise<PooledVm> {
    const run = this.creating.then(() => this.createNow())
    this.creating = run.catch(() => undefined)
    return run
  }

  private async createNow(): Promise<PooledVm> {
    await applyInterpreterPatches()
    const { made: vm, listeners } = await withCommonListeners(this.common, () => newVm(this.common))
    this.created++
    return { vm, listeners }
  }
}

/**
 * What `create` made, with the `hardforkChanged` listeners it added to `common` (each EVM made on a
 * Common adds one; see the module comment): what removeCommonListeners takes when that EVM is let
 * go. No other creation on `common` may run meanwhile, or its listeners are counted here too.
 */
export async function withCommonListeners<T>(common: Common, create: () => Promise<T>): Promise<{ made: T; listeners: Listener[] }> {
  const before = new Set(common.events.listeners(HARDFORK_CHANGED))
  const made = await create()
  return { made, listeners: (common.events.listeners(HARDFORK_CHANGED) as Listener[]).filter((l) => !before.has(l)) }
}

/** Removes listeners withCommonListeners found, so that nothing on `common` keeps their EVM. */
export function removeCommonListeners(common: Common, listeners: readonly Listener[]): void {
  for (const listener of listeners) common.events.removeListener(HARDFORK_CHANGED, listener)
}

/**
 * A VM over an empty overlay, its BLOCKHASH asking the reader under the overlay it is bound to
 * (reader-block-hashes.ts). A function of its own so that the closure the VM keeps (attach's)
 * captures the VM alone: created inside createNow it shared that scope's context, which held
 * `before`, the listeners of every VM live at this one's creation, whose contexts are their EVMs;
 * each VM then kept those alive after the pool dropped them, with the overlay each was last bound
 * to, and they the VMs before them: a chain that grew by every VM discarded while another was live
 * (a worker's live heap under bench:soak, ~0.6 MB a minute: BENCHMARKS.md, Soak, eleventh session).
 */
async function newVm(common: Common): Promise<VM> {
  const blockchain = new ReaderBlockHashes()
  const vm = await createVM({ common, stateManager: JournaledState.over(EMPTY_STATE_READER), blockchain })
  blockchain.attach(() => vm.evm.stateManager)
  patchEvmInstance(vm.evm)
  return vm
}

function bind(vm: VM, state: JournaledState) {
  ;(vm as unknown as { stateManager: JournaledState }).stateManager = state
  vm.evm.stateManager = state
  // The EVM journal wraps the state manager; its per-transaction maps are reset by runTx itself.
  ;(vm.evm.journal as unknown as { stateManager: JournaledState }).stateManager = state
}
