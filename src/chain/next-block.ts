/**
 * The header fields of a next block and the EIP-1559 base fee rule: chain facts, shared by the state
 * sources (the devnet commits blocks with them) and the simulator (which executes in them).
 */
import type { Address, BlockInfo, Hex } from './types.ts'

/** Header fields of the block a simulation executes in. */
export interface ExecutionBlock {
  number: bigint
  timestamp: bigint
  gasLimit: bigint
  baseFeePerGas?: bigint
  coinbase: Address
  prevRandao: Hex
  difficulty: bigint
  excessBlobGas?: bigint
  parentHash: Hex
}

const ELASTICITY_MULTIPLIER = 2n
const BASE_FEE_MAX_CHANGE_DENOMINATOR = 8n

/** EIP-1559 base fee of the child of `parent` (undefined when the parent has none, i.e. pre-London). */
export function nextBaseFee(parent: Pick<BlockInfo, 'gasLimit' | 'gasUsed' | 'baseFeePerGas'>): bigint | undefined {
  const baseFee = parent.baseFeePerGas
  if (baseFee === undefined) return undefined
  const target = parent.gasLimit / ELASTICITY_MULTIPLIER
  if (target === 0n || parent.gasUsed === target) return baseFee
  if (parent.gasUsed > target) {
    const delta = (baseFee * (parent.gasUsed - target)) / target / BASE_FEE_MAX_CHANGE_DENOMINATOR
    return baseFee + (delta > 1n ? delta : 1n)
  }
  const delta = (baseFee * (target - parent.gasUsed)) / target / BASE_FEE_MAX_CHANGE_DENOMINATOR
  return baseFee - delta
}
