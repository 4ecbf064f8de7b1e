/**
 * View calls into contracts, executed in-process by the Simulator on a state pinned to one block,
 * so discovery and pool loading work the same on the embedded devnet and on a fork (where the
 * reads the EVM makes become batched upstream requests).
 *
 * Calls run concurrently up to a bound: concurrent calls let the fork reader batch their upstream
 * reads into one round trip, but every call in flight holds an EVM from the simulator's pool and
 * beyond its idle size new EVMs are created and dropped (measured on the devnet: 100 calls at
 * once take 4x longer than 16 at a time).
 */
import {
  decodeFunctionResult,
  encodeFunctionData,
  type Abi,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  type DecodeFunctionResultParameters,
  type EncodeFunctionDataParameters,
} from 'viem'
import { bytesToHexString } from '../chain/quantity.ts'
import type { Address, StateReader } from '../chain/types.ts'
import { SimulationState, type Simulator } from '../evm/simulator.ts'
import { BaseError } from '../primitives/base-error.ts'

/**
 * A view call that reverted, halted or returned something that does not decode, or a pool whose
 * answers contradict what discovery said of it (inconsistent): in every case not a usable pool.
 */
export class ViewCallError extends BaseError {
  override readonly name = 'ViewCallError'
  constructor(
    message: string,
    readonly target: Address,
    readonly functionName: string,
    readonly reason: 'reverted' | 'halted' | 'undecodable' | 'inconsistent',
  ) {
    super(message)
  }
}

/** the caller of view calls: an address that holds nothing and is never a contract */
export const VIEW_CALLER: Address = '0x0000000000000000000000000000000000000b0b'
/** gas for one view call: plenty for getters, bounded so a broken contract cannot spin */
const VIEW_CALL_GAS = 5_000_000n
export const DEFAULT_VIEW_CALL_CONCURRENCY = 16

type ViewName<TAbi extends Abi> = ContractFunctionName<TAbi, 'pure' | 'view'>

export class ViewCaller {
  private inFlight = 0
  private readonly waiting: Array<() => void> = []
  private readonly state: SimulationState

  readonly reader: StateReader

  /**
   * @param source a reader (calls see its block) or a simulation state (calls see that state,
   *   e.g. the one after a user's swap; the reader is then the state's base block)
   */
  constructor(
    readonly simulator: Simulator,
    source: StateReader | SimulationState,
    private readonly concurrency = DEFAULT_VIEW_CALL_CONCURRENCY,
  ) {
    if (source instanceof SimulationState) {
      this.state = source
      this.reader = source.reader
    } else {
      this.state = simulator.openState(source)
      this.reader = source
    }
  }

  async read<const TAbi extends Abi, TName extends ViewName<TAbi>>(
    to: Address,
    abi: TAbi,
    functionName: TName,
    args: ContractFunctionArgs<TAbi, 'pure' | 'view', TName>,
  ): Promise<ContractFunctionReturnType<TAbi, 'pure' | 'view', TName>> {
    const data = encodeFunctionData({ abi, functionName, args } as unknown as EncodeFunctionDataParameters)
    await this.acquire()
    let result: Awaited<ReturnType<Simulator['call']>>
    try {
      result = await this.simulator.call(this.state, { from: VIEW_CALLER, to, data, gasLimit: VIEW_CALL_GAS })
    } finally {
      this.release()
    }
    if (result.status !== 'success') {
      const why = result.status === 'reverted' ? (result.revertReason ?? 'no reason') : (result.error ?? 'halted')
      throw new ViewCallError(`${functionName} on ${to} ${result.status}: ${why}`, to, functionName, result.status)
    }
    try {
      return decodeFunctionResult({ abi, functionName, data: bytesToHexString(result.returnData) } as unknown as DecodeFunctionResultParameters) as ContractFunctionReturnType<
        TAbi,
        'pure' | 'view',
        TName
      >
    } catch {
      // typically an address without code: the call succeeds and returns nothing
      throw new ViewCallError(`${functionName} on ${to} returned ${result.returnData.length} bytes that do not decode`, to, functionName, 'undecodable')
    }
  }

  /**
   * One storage word of `address` in the caller's state (a block's, or one a simulation left):
   * for contracts whose storage layout is their public interface (Uniswap V4's PoolManager, read
   * at StateLibrary's slots), no call is needed. Not bounded by the concurrency: a read runs no EVM.
   */
  storage(address: Address, slot: bigint): Promise<bigint> {
    return this.state.overlay.readStorage(address, slot)
  }

  private async acquire(): Promise<void> {
    if (this.inFlight < this.concurrency) {
      this.inFlight++
      return
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  private release(): void {
    const next = this.waiting.shift()
    // hand the slot straight to the next waiter: inFlight stays the same
    if (next) next()
    else this.inFlight--
  }
}

/** A cache key naming one block: number and hash, so a reorged block never shares entries. */
export function blockKey(reader: StateReader): string {
  return `${reader.block.number}:${reader.block.hash}`
}
