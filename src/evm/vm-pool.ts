/**
 * A bounded pool of ethereumjs VMs for one chain configuration. Creating a VM costs about 0.5 ms
 * (opcode tables, precompiles), a large share of a 2 ms swap simulation, so VMs are reused: each
 * is bound to one simulation's state overlay at a time and never shared by two simulations.
 */
import type { Common } from '@ethereumjs/common'
import { createVM, type VM } from '@ethereumjs/vm'
import { JournaledState } from './journaled-state.ts'
import { applyInterpreterPatches, patchEvmInstance } from './interpreter-patches.ts'
import { EMPTY_STATE_READER } from './empty-state.ts'

export class VmPool {
  private readonly idle: VM[] = []

  constructor(
    readonly common: Common,
    /** VMs kept idle at most; simulations beyond it create and drop extra VMs */
    private readonly maxIdle = 16,
  ) {}

  /** Runs `work` with a VM bound to `state`, then returns the VM to the pool. */
  async with<T>(state: JournaledState, work: (vm: VM) => Promise<T>): Promise<T> {
    const vm = this.idle.pop() ?? (await this.create())
    bind(vm, state)
    // A VM that saw an exception (an upstream read failing mid-execution) may hold a half-unwound
    // EVM journal: it is dropped rather than reused.
    const result = await work(vm)
    if (this.idle.length < this.maxIdle) this.idle.push(vm)
    return result
  }

  private async create(): Promise<VM> {
    await applyInterpreterPatches()
    const vm = await createVM({ common: this.common, stateManager: JournaledState.over(EMPTY_STATE_READER) })
    patchEvmInstance(vm.evm)
    return vm
  }
}

function bind(vm: VM, state: JournaledState) {
  ;(vm as unknown as { stateManager: JournaledState }).stateManager = state
  vm.evm.stateManager = state
  // The EVM journal wraps the state manager; its per-transaction maps are reset by runTx itself.
  ;(vm.evm.journal as unknown as { stateManager: JournaledState }).stateManager = state
}
