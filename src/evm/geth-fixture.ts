/**
 * Replays one go-ethereum tracer test fixture (genesis prestate, block context, raw signed
 * transaction) through our simulator. The hardfork comes from the genesis config and the block.
 */
import type { GethGenesis } from '@ethereumjs/common'
import { createTxFromRLP } from '@ethereumjs/tx'
import { MemoryStateReader } from '../chain/memory/memory-state-reader.ts'
import { parseGenesis, type GethGenesisJson } from '../chain/memory/genesis.ts'
import { hexToBytesStrict, normalizeAddress, parseOptionalQuantity, parseQuantity } from '../chain/quantity.ts'
import type { Hex } from '../chain/types.ts'
import type { ExecutionBlock } from './block-context.ts'
import { commonFromGethGenesis } from './chain-config.ts'
import type { ExecutionBudget } from './execution-budget.ts'
import { Simulator, type TransactionResult } from './simulator.ts'

export interface GethFixture {
  genesis: GethGenesisJson
  context: {
    number: string | number
    timestamp: string | number
    gasLimit: string | number
    miner: string
    difficulty?: string | number
    baseFeePerGas?: string | number
    mixHash?: string
    excessBlobGas?: string | number
  }
  input: Hex
  result?: unknown
}

export interface ReplayOutcome {
  hardfork: string
  result: TransactionResult
}

export interface ReplayOptions {
  /**
   * what the replayed transaction may cost (execution-budget.ts); default the service's
   * (DEFAULT_EXECUTION_BUDGET). Past it the replay throws an ExecutionBudgetError.
   */
  budget?: ExecutionBudget
}

export async function replayGethFixture(fixture: GethFixture, options: ReplayOptions = {}): Promise<ReplayOutcome> {
  const ctx = fixture.context
  const block: ExecutionBlock = {
    number: parseQuantity(ctx.number, 'context.number'),
    timestamp: parseQuantity(ctx.timestamp, 'context.timestamp'),
    gasLimit: parseQuantity(ctx.gasLimit, 'context.gasLimit'),
    baseFeePerGas: parseOptionalQuantity(ctx.baseFeePerGas, 'context.baseFeePerGas'),
    coinbase: normalizeAddress(ctx.miner, 'context.miner'),
    prevRandao: (ctx.mixHash ?? `0x${'00'.repeat(32)}`) as Hex,
    difficulty: parseQuantity(ctx.difficulty ?? 0, 'context.difficulty'),
    excessBlobGas: parseOptionalQuantity(ctx.excessBlobGas, 'context.excessBlobGas'),
    parentHash: `0x${'00'.repeat(32)}`,
  }
  const genesis = parseGenesis(fixture.genesis)
  const common = commonFromGethGenesis(normalizeGethConfig(fixture.genesis, block.difficulty > 0n) as unknown as GethGenesis, block)
  const simulator = new Simulator({ common, budget: options.budget })
  const reader = new MemoryStateReader(genesis.block, genesis.accounts)
  const tx = createTxFromRLP(hexToBytesStrict(fixture.input, 'input'), { common })
  const result = await simulator.transaction(simulator.openState(reader, block), tx)
  return { hardfork: common.hardfork(), result }
}

const CANONICAL_CONFIG_KEYS = [
  'chainId', 'homesteadBlock', 'daoForkBlock', 'daoForkSupport', 'eip150Block', 'eip150Hash', 'eip155Block',
  'eip158Block', 'byzantiumBlock', 'constantinopleBlock', 'petersburgBlock', 'istanbulBlock', 'muirGlacierBlock',
  'berlinBlock', 'londonBlock', 'arrowGlacierBlock', 'grayGlacierBlock', 'mergeNetsplitBlock', 'shanghaiTime',
  'cancunTime', 'pragueTime', 'osakaTime', 'terminalTotalDifficulty', 'terminalTotalDifficultyPassed', 'blobSchedule',
  'ethash', 'clique', 'depositContractAddress',
]

/** The block-numbered forks in go-ethereum's order (its CheckConfigForkOrder list, without the DAO fork). */
const FORK_BLOCK_ORDER = [
  'homesteadBlock', 'eip150Block', 'eip158Block', 'byzantiumBlock', 'constantinopleBlock', 'petersburgBlock',
  'istanbulBlock', 'muirGlacierBlock', 'berlinBlock', 'londonBlock', 'arrowGlacierBlock', 'grayGlacierBlock',
  'mergeNetsplitBlock',
]

/**
 * go-ethereum reads config keys case-insensitively (one fixture spells `IstanbulBlock`), so the
 * keys are mapped to their canonical spelling. The consensus engine section (clique) is dropped:
 * it decides who seals blocks, never how a transaction executes, and ethereumjs would demand a
 * signer to build the block.
 *
 * go-ethereum asks each fork on its own whether it is active (`IsEIP150(n)`, `IsEIP158(n)`, ...),
 * while ethereumjs knows hardforks as a sequence and rejects or misreads configs that are not one:
 * - `eip155Block` must equal `eip158Block` (both are Spurious Dragon). EIP-155 only decides which
 *   signatures are accepted (replay protection); what a transaction executes under (EIP-158
 *   state clearing, EIP-160, EIP-170) is EIP-158's, so Spurious Dragon is put at `eip158Block`
 *   (and left out when only `eip155Block` is configured). Between the two blocks ethereumjs may
 *   then accept or refuse a replay-protected signature that geth would not; execution is the same.
 * - fork blocks out of order (mainnet's Homestead at 1,150,000 with EIP-150 and EIP-158 at 0, as
 *   in geth's call_tracer_flat `big_slow.json`): ethereumjs sorts forks by block and would run
 *   block 1,719,577 under Homestead alone, where geth runs EIP-150 and EIP-158. Each fork's block is
 *   brought down to the earliest block of the forks after it, so a block runs under the latest fork
 *   geth finds active there. This is geth's answer wherever the earlier forks are active too (every
 *   block of that fixture); below them geth would mix rules no hardfork sequence can express.
 */
export function normalizeGethConfig(genesis: GethGenesisJson, proofOfWorkBlock: boolean): GethGenesisJson {
  const canonical = new Map(CANONICAL_CONFIG_KEYS.map((k) => [k.toLowerCase(), k]))
  const config: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(genesis.config)) {
    const name = canonical.get(key.toLowerCase()) ?? key
    if (name === 'clique') continue
    // ethereumjs schedules the merge at block 0 whenever a timestamp fork (shanghaiTime, ...) is
    // configured; for a block still mined by proof of work (difficulty > 0) the merge and every
    // timestamp fork lie in its future, so they are left out.
    if (proofOfWorkBlock && (name === 'terminalTotalDifficulty' || name === 'mergeNetsplitBlock' || name.endsWith('Time'))) continue
    config[name] = value
  }
  let earliestLater: number | undefined
  for (let i = FORK_BLOCK_ORDER.length - 1; i >= 0; i--) {
    const name = FORK_BLOCK_ORDER[i]
    const block = config[name]
    if (typeof block !== 'number') continue
    if (earliestLater !== undefined && block > earliestLater) config[name] = earliestLater
    earliestLater = Math.min(block, earliestLater ?? block)
  }
  if (config.eip158Block === undefined) delete config.eip155Block
  else config.eip155Block = config.eip158Block
  return { ...genesis, config }
}
