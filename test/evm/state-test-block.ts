/** The block a state test's transaction executes in, from the test's `env` (state-tests.test.ts, quadratic-complexity.anvil.test.ts). */
import { normalizeAddress, parseQuantity } from '../../src/chain/quantity.ts'
import type { Hex } from '../../src/chain/types.ts'
import type { ExecutionBlock } from '../../src/evm/block-context.ts'

export interface StateTestEnv {
  currentCoinbase: string
  currentGasLimit: string
  currentNumber: string
  currentTimestamp: string
  currentBaseFee: string
  currentRandom: Hex
  currentExcessBlobGas?: string
}

export function stateTestBlock(env: StateTestEnv): ExecutionBlock {
  return {
    number: parseQuantity(env.currentNumber),
    timestamp: parseQuantity(env.currentTimestamp),
    gasLimit: parseQuantity(env.currentGasLimit),
    baseFeePerGas: parseQuantity(env.currentBaseFee),
    coinbase: normalizeAddress(env.currentCoinbase),
    prevRandao: env.currentRandom,
    difficulty: 0n,
    excessBlobGas: parseQuantity(env.currentExcessBlobGas ?? 0),
    parentHash: `0x${'00'.repeat(32)}`,
  }
}
