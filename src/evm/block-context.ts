/**
 * The block a simulation runs in. Everything is simulated in a next-block context (number + 1,
 * timestamp + block time, next base fee): gas depends on it (a V3 swap skips its oracle write when
 * the timestamp equals the last observation's), and it is where a submitted transaction would land.
 */
import type { Common } from '@ethereumjs/common'
import { createBlock, type Block } from '@ethereumjs/block'
import { hexToBytesStrict } from '../chain/quantity.ts'
import type { BlockInfo } from '../chain/types.ts'

export { nextBaseFee, type ExecutionBlock } from '../chain/next-block.ts'
import { nextBaseFee, type ExecutionBlock } from '../chain/next-block.ts'


export function nextBlockContext(parent: BlockInfo, blockTimeSeconds: bigint): ExecutionBlock {
  return {
    number: parent.number + 1n,
    timestamp: parent.timestamp + blockTimeSeconds,
    gasLimit: parent.gasLimit,
    baseFeePerGas: nextBaseFee(parent),
    coinbase: parent.coinbase,
    prevRandao: parent.prevRandao,
    difficulty: parent.baseFeePerGas === undefined ? parent.difficulty : 0n,
    excessBlobGas: parent.excessBlobGas,
    parentHash: parent.hash,
  }
}

/** The ethereumjs block object for an execution context. */
export function toEjsBlock(ctx: ExecutionBlock, common: Common): Block {
  const london = common.isActivatedEIP(1559)
  const merged = common.gteHardfork('paris')
  return createBlock(
    {
      header: {
        number: ctx.number,
        timestamp: ctx.timestamp,
        gasLimit: ctx.gasLimit,
        baseFeePerGas: london ? (ctx.baseFeePerGas ?? 0n) : undefined,
        coinbase: ctx.coinbase,
        mixHash: hexToBytesStrict(ctx.prevRandao),
        difficulty: merged ? 0n : ctx.difficulty,
        parentHash: hexToBytesStrict(ctx.parentHash),
        excessBlobGas: common.isActivatedEIP(4844) ? (ctx.excessBlobGas ?? 0n) : undefined,
      },
    },
    { common, skipConsensusFormatValidation: true },
  )
}
