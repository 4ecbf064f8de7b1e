/** Ethereum state tests (fixtures/state-tests) as go-ethereum tracer fixtures, the form `npm run replay` reads. */
import type { Hex } from '../../src/chain/types.ts'

export interface StateTestPost {
  hash: Hex
  logs: Hex
  txbytes: Hex
  expectException?: string
}
export interface StateTest {
  env: Record<string, string>
  pre: Record<string, unknown>
  post: { Cancun: StateTestPost[] }
}

const CANCUN_CONFIG = {
  chainId: 1,
  homesteadBlock: 0,
  eip150Block: 0,
  eip155Block: 0,
  eip158Block: 0,
  byzantiumBlock: 0,
  constantinopleBlock: 0,
  petersburgBlock: 0,
  istanbulBlock: 0,
  berlinBlock: 0,
  londonBlock: 0,
  mergeNetsplitBlock: 0,
  shanghaiTime: 0,
  cancunTime: 0,
  terminalTotalDifficulty: 0,
  terminalTotalDifficultyPassed: true,
  blobSchedule: { cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 } },
}

/** A state-test case as a go-ethereum tracer fixture: its pre-state as genesis, its env as the block. */
export function toGethFixture(test: StateTest, post: StateTestPost) {
  const env = test.env
  return {
    genesis: {
      config: CANCUN_CONFIG,
      alloc: test.pre,
      nonce: '0x0',
      timestamp: '0x0',
      extraData: '0x',
      gasLimit: env.currentGasLimit,
      difficulty: '0x0',
      mixHash: `0x${'00'.repeat(32)}`,
      coinbase: `0x${'00'.repeat(20)}`,
    },
    context: {
      number: env.currentNumber,
      timestamp: env.currentTimestamp,
      gasLimit: env.currentGasLimit,
      miner: env.currentCoinbase,
      difficulty: '0x0',
      baseFeePerGas: env.currentBaseFee,
      mixHash: env.currentRandom,
      excessBlobGas: env.currentExcessBlobGas ?? '0x0',
    },
    input: post.txbytes,
  }
}
