/**
 * The Dispatcher's {@link BackrunPlanner} on the eth_backrun engine: a signed backrun transaction
 * of the searcher account, to be placed right behind the user's transactions in the bundle.
 *
 *   current head (next-block context)
 *     -> the user's signed txs executed in order (a notify: the notified tx alone), every inclusion rule
 *     -> a searcher key leased for the target block from the SearcherKeyPool (one backrun per key
 *        per block, so backruns of one block never share a nonce); none left: no backrun this block
 *     -> BackrunEngine.searchAfter(base, after, their logs, { origin: searcher, refundBps,
 *        refundRecipient: the user })  (the refund share goes to the signer of the last user tx,
 *        named to the contract: tx.origin is our searcher in a bundle)
 *     -> an EIP-1559 tx from the searcher: to = executor, data = the engine's cycle as
 *        backrunExact with the verified gross profit as its expected profit (it realizes exactly
 *        that or reverts),
 *        nonce = the searcher's nonce after the user txs on this head, maxPriorityFeePerGas from
 *        config or just above the user's own tip (see backrunTip),
 *        maxFeePerGas = 2 x next base fee + priority fee, gas limit = (measured gas + 21 000) + margin
 *     -> signed, decoded again (sender must be the searcher), and executed on the post-user state:
 *        it must succeed; its return value is the gross profit reported
 *
 * `null`: the user txs revert, or no backrun is profitable (the engine's minimum, and a positive
 * net once the transaction's own 21 000 base gas is paid). Throws {@link BackrunPlanError} when a
 * plan cannot be made for a reason worth seeing in the submission's lifecycle ("why no backrun").
 */
import { decodeAbiParameters, hexToBytes, keccak256, serializeTransaction, type TransactionSerializableEIP1559 } from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { inspect } from 'node:util'

import { toExactBackrunCall } from '../backrun/backrun-calldata.ts'
import { readPoolMoves } from '../backrun/pool-moves.ts'
import type { BackrunEngine } from '../backrun/backrun-engine.ts'
import { bytesToHexString } from '../chain/quantity.ts'
import type { Address, ChainStateSource, Hex } from '../chain/types.ts'
import { signHash } from '../crypto/sign.ts'
import { BaseError } from '../primitives/base-error.ts'
import { TransactionRejectedError, type BundleResult, type Simulator, type TransactionResult } from '../evm/simulator.ts'
import { nonNegativeInt } from '../primitives/numbers.ts'
import { decodeSignedTransaction, type DecodedTransaction } from '../tx/decode-transaction.ts'
import type { BackrunTransactionRequest, BackrunTransactionSigner } from './backrun-signer.ts'
import type { BackrunPlan, BackrunPlanInput, BackrunPlanner } from './dispatcher-ports.ts'
import { executable, throwIfAborted } from './engine-simulator.ts'
import { SearcherKeyPool } from './searcher-key-pool.ts'

export type { BackrunTransactionRequest, BackrunTransactionSigner } from './backrun-signer.ts'

export interface EngineBackrunPlannerOptions {
  /** the newest head, and the chain id the backrun is signed for */
  chain: Pick<ChainStateSource, 'chainId' | 'latest'>
  simulator: Pick<Simulator, 'openState' | 'bundle' | 'transaction' | 'common'>
  engine: Pick<BackrunEngine, 'searchAfter'>
  /** the searcher accounts backruns are signed with: one key, or a pool (one backrun per key per block) */
  signer: BackrunTransactionSigner | SearcherKeyPool
  /** share of the gross profit refunded to the user (the signer of the last user tx), basis points. Default 0. */
  refundBps?: number
  /** tip of the backrun transaction, wei per gas */
  maxPriorityFeePerGas: bigint
  /** added to the measured gas (the backrun's execution + 21 000), basis points. Default 3 000 (+30%). */
  gasLimitMarginBps?: number
}

/**
 * - `user-txs-not-includable`: the user's txs cannot be executed on the current head (nonce, funds)
 * - `signer-mismatch`: the signed tx does not recover to the signer's address
 * - `backrun-not-includable`: the signed backrun cannot be included (e.g. the searcher cannot pay its gas)
 * - `backrun-failed`: the signed backrun reverts or halts on the post-user state
 * - `no-searcher-key`: every searcher key already carries a backrun for the target block
 */
export type BackrunPlanErrorReason = 'user-txs-not-includable' | 'signer-mismatch' | 'backrun-not-includable' | 'backrun-failed' | 'no-searcher-key'

export class BackrunPlanError extends BaseError {
  override readonly name = 'BackrunPlanError'

  constructor(
    readonly reason: BackrunPlanErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, { cause: options?.cause })
  }
}

const TX_BASE_GAS = 21_000n
const DEFAULT_GAS_MARGIN_BPS = 3_000

export class EngineBackrunPlanner implements BackrunPlanner {
  private readonly chain: EngineBackrunPlannerOptions['chain']
  private readonly simulator: EngineBackrunPlannerOptions['simulator']
  private readonly engine: EngineBackrunPlannerOptions['engine']
  readonly keys: SearcherKeyPool
  private readonly refundBps: number
  private readonly maxPriorityFeePerGas: bigint
  private readonly marginBps: bigint

  /** @throws TypeError / RangeError for a bad option */
  constructor(options: EngineBackrunPlannerOptions) {
    const signers = options.signer instanceof SearcherKeyPool ? options.signer.signers : [options.signer]
    for (const signer of signers) {
      if (typeof signer?.signTransaction !== 'function' || !/^0x[0-9a-fA-F]{40}$/.test(signer.address)) {
        throw new TypeError('EngineBackrunPlanner: signer must have an address and signTransaction')
      }
    }
    const refundBps = options.refundBps ?? 0
    if (!Number.isSafeInteger(refundBps) || refundBps < 0 || refundBps > 10_000) throw new RangeError(`EngineBackrunPlanner: refundBps must be an integer in 0..10000, got ${refundBps}`)
    if (typeof options.maxPriorityFeePerGas !== 'bigint' || options.maxPriorityFeePerGas < 0n) {
      throw new RangeError('EngineBackrunPlanner: maxPriorityFeePerGas must be a non-negative bigint (wei)')
    }
    const margin = nonNegativeInt('gasLimitMarginBps', options.gasLimitMarginBps ?? DEFAULT_GAS_MARGIN_BPS, 'EngineBackrunPlanner')
    this.chain = options.chain
    this.simulator = options.simulator
    this.engine = options.engine
    this.keys = options.signer instanceof SearcherKeyPool ? options.signer : new SearcherKeyPool(signers)
    this.refundBps = refundBps
    this.maxPriorityFeePerGas = options.maxPriorityFeePerGas
    this.marginBps = BigInt(margin)
  }

  release(id: string, block: bigint): void {
    this.keys.release(block, id)
  }

  async plan(input: BackrunPlanInput): Promise<BackrunPlan | null> {
    throwIfAborted(input.signal)
    // the user's txs revert: their effects are undone, nothing to backrun
    if (input.simulation !== undefined && !input.simulation.success) return null
    if (input.userTxs.length === 0) return null
    const { simulator } = this
    const userTxs = input.kind === 'notify' ? input.userTxs.slice(-1) : input.userTxs

    const reader = this.chain.latest()
    const base = simulator.openState(reader)
    let users: BundleResult
    try {
      users = await simulator.bundle(base, userTxs.map((t) => executable(t, simulator)))
    } catch (err) {
      if (err instanceof TransactionRejectedError) {
        throw new BackrunPlanError('user-txs-not-includable', `the user transactions cannot be executed on block ${reader.block.number + 1n}: ${err.message}`, { cause: err })
      }
      throw err
    }
    if (!users.success) return null
    throwIfAborted(input.signal)

    const target = reader.block.number + 1n
    // blocks up to this head are built: their leases are void
    this.keys.pruneThrough(reader.block.number)
    const owner = input.id
    const signer = this.keys.lease(target, owner)
    if (signer === undefined) {
      throw new BackrunPlanError('no-searcher-key', `all ${this.keys.size} searcher keys already carry a backrun for block ${target}; planned again at the next head`)
    }
    try {
      const plan = await this.planWith(signer, target, input, base, users)
      if (plan === null) this.keys.release(target, owner)
      return plan
    } catch (err) {
      this.keys.release(target, owner)
      throw err
    }
  }

  private async planWith(
    signer: BackrunTransactionSigner,
    target: bigint,
    input: BackrunPlanInput,
    base: ReturnType<EngineBackrunPlannerOptions['simulator']['openState']>,
    users: BundleResult,
  ): Promise<BackrunPlan | null> {
    const { simulator } = this
    const searcher = signer.address.toLowerCase() as Address
    const user = input.userTxs[input.userTxs.length - 1].sender
    const logs = users.results.flatMap((r) => r.logs)
    const found = await this.engine.searchAfter(base, users.state, logs, { origin: searcher, refundBps: this.refundBps, refundRecipient: user })
    if (found === null) return null
    throwIfAborted(input.signal)

    const nonce = (await users.state.overlay.readAccount(searcher))?.nonce ?? 0n
    const baseFee = base.block.baseFeePerGas ?? 0n
    const tip = backrunTip(this.maxPriorityFeePerGas, input.userTxs, baseFee, {
      userGas: users.results.map((r) => r.gasUsed),
      backrunGas: found.gas + TX_BASE_GAS,
      floor: input.tipFloor ?? 0n,
    })
    const maxFeePerGas = 2n * baseFee + tip
    const measured = found.gas + TX_BASE_GAS
    const gasLimit = (measured * (10_000n + this.marginBps) + 9_999n) / 10_000n
    const raw = await signer.signTransaction({
      chainId: this.chain.chainId,
      nonce,
      to: found.contract,
      // backrunExact: it lands only where it realizes exactly the profit reported for this block;
      // on a state that earlier bundles moved it reverts, its bundle fails, and the backrun-free
      // bundle lands the user instead
      data: toExactBackrunCall(found.calldata, found.grossProfit),
      gasLimit,
      maxFeePerGas,
      maxPriorityFeePerGas: tip,
    })

    const signed = decodeSignedTransaction(raw, { chainId: this.chain.chainId, common: simulator.common })
    if (signed.sender !== searcher) {
      throw new BackrunPlanError('signer-mismatch', `the signed backrun recovers to ${signed.sender}, not the searcher ${searcher}`)
    }
    let executed: TransactionResult
    try {
      executed = await simulator.transaction(users.state, signed.tx)
    } catch (err) {
      if (err instanceof TransactionRejectedError) {
        throw new BackrunPlanError('backrun-not-includable', `the signed backrun cannot be included: ${err.message}`, { cause: err })
      }
      throw err
    }
    if (executed.status !== 'success') {
      const why = executed.status === 'halted' ? `halted (${executed.error ?? 'EVM error'})` : `reverted (${executed.revertReason ?? 'no reason'})`
      throw new BackrunPlanError('backrun-failed', `the signed backrun ${why} right after the user transactions`)
    }
    const grossProfit = returnedProfit(executed) ?? found.grossProfit
    // the engine's net counts the backrun's execution gas only (as inside a user transaction);
    // a transaction of its own also pays the base 21 000 and whatever else its receipt shows
    // and its tip may be above the configured one (see backrunTip)
    const netProfitWei =
      found.netProfitWei - (executed.gasUsed > found.gas ? executed.gasUsed - found.gas : 0n) * (baseFee + tip) - found.gas * (tip - this.maxPriorityFeePerGas)
    if (grossProfit <= 0n || netProfitWei <= 0n) return null

    // what the bundle [user txs, backrun] moves: the pools the user's swaps moved and the cycle's
    const pools = [...new Set([...readPoolMoves(logs).keys(), ...found.hops.map((h) => h.pool.toLowerCase() as Address)])]
    return { rawBackrunTx: signed.rawHex, grossProfit, profitToken: found.profitToken, netProfitWei, gasUsed: executed.gasUsed, block: target, searcher, pools }
  }
}

/**
 * The backrun's tip. Builders order bundles by what they pay per gas, and the backrun bundle
 * [user txs, backrun] competes with the user's own bundle [user txs] beside it and with the other
 * users' bundles of the block. It must pay more per gas than the user's own (or the builder merges
 * that first and the backrun, which conflicts with it, never lands), and more than `floor` (the
 * highest tip among the other users' submissions for the block) so that it is merged before them
 * and finds the state it was planned on. So: the configured tip, or the smallest tip above both,
 * whichever is higher. Its cost is taken from the net profit.
 */
export function backrunTip(
  configured: bigint,
  userTxs: readonly DecodedTransaction[],
  baseFee: bigint,
  weights?: { userGas: readonly bigint[]; backrunGas: bigint; floor: bigint },
): bigint {
  let highest = 0n
  let userPay = 0n
  let userGas = 0n
  for (const [i, tx] of userTxs.entries()) {
    const headroom = tx.gasFeeCap - baseFee
    const effective = tx.gasTipCap < headroom ? tx.gasTipCap : headroom
    if (effective > highest) highest = effective
    const gas = weights?.userGas[i] ?? 0n
    userPay += (effective > 0n ? effective : 0n) * gas
    userGas += gas
  }
  let tip = highest + 1n > configured ? highest + 1n : configured
  if (weights !== undefined && weights.backrunGas > 0n && weights.floor >= highest) {
    // (userPay + tip * backrunGas) / (userGas + backrunGas) > floor
    const needed = ((weights.floor + 1n) * (userGas + weights.backrunGas) - userPay + weights.backrunGas - 1n) / weights.backrunGas
    if (needed > tip) tip = needed
  }
  return tip
}

/** BackrunExecutor.backrun returns its gross profit (uint256). */
function returnedProfit(result: TransactionResult): bigint | undefined {
  if (result.returnData.length < 32) return undefined
  const [profit] = decodeAbiParameters([{ type: 'uint256' }], bytesToHexString(result.returnData.subarray(0, 32)))
  return profit
}

// ---------------------------------------------------------------------------------------------

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/

/**
 * A {@link BackrunTransactionSigner} over a private key (e.g. SEARCHER_PRIVATE_KEY), with viem.
 * The key stays inside the returned object's closure: String(), JSON.stringify and util.inspect
 * show the address only, and error messages never quote the key.
 * @throws TypeError when the key is not 32 bytes of 0x-hex or not a valid secp256k1 key
 */
export function privateKeyBackrunSigner(privateKey: string): BackrunTransactionSigner {
  if (typeof privateKey !== 'string' || !PRIVATE_KEY.test(privateKey)) throw new TypeError('searcher private key must be 0x-prefixed 32-byte hex')
  let account: PrivateKeyAccount
  try {
    account = privateKeyToAccount(privateKey.toLowerCase() as Hex)
  } catch {
    throw new TypeError('searcher private key is not a valid secp256k1 private key')
  }
  const address = account.address
  const key = hexToBytes(privateKey.toLowerCase() as Hex)
  const describe = (): string => `BackrunTransactionSigner(${address}, private key redacted)`
  return {
    address,
    async signTransaction(request: BackrunTransactionRequest): Promise<Hex> {
      if (request.chainId > BigInt(Number.MAX_SAFE_INTEGER) || request.nonce > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new RangeError('backrun transaction: chainId and nonce must be below 2^53')
      }
      const tx: TransactionSerializableEIP1559 = {
        type: 'eip1559',
        chainId: Number(request.chainId),
        nonce: Number(request.nonce),
        to: request.to,
        data: request.data,
        value: 0n,
        gas: request.gasLimit,
        maxFeePerGas: request.maxFeePerGas,
        maxPriorityFeePerGas: request.maxPriorityFeePerGas,
        accessList: [],
      }
      // what viem's account.signTransaction does, with the native signer (src/crypto/sign.ts)
      const signature = await signHash(keccak256(serializeTransaction(tx), 'bytes'), key)
      return serializeTransaction(tx, signature)
    },
    toString: describe,
    toJSON: describe,
    [inspect.custom]: describe,
  } as BackrunTransactionSigner
}
