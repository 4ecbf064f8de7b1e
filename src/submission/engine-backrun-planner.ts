/**
 * The Dispatcher's {@link BackrunPlanner} on the eth_backrun engine, on this thread (WORKERS=0): a
 * signed backrun transaction of the searcher account, to be placed right behind the user's
 * transactions in the bundle. The steps are backrun-planning.ts's (the pooled planner of
 * src/workers runs the same ones in a worker); here the searcher keys are at hand, a
 * SearcherKeyPool of this thread (searcher-key-leases.ts).
 *
 * `null`: the user txs revert, or no backrun is profitable. Throws {@link BackrunPlanError} when a
 * plan cannot be made for a reason worth seeing in the submission's lifecycle ("why no backrun").
 */
import { hexToBytes, keccak256, serializeTransaction, type TransactionSerializableEIP1559 } from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { inspect } from 'node:util'

import type { BackrunEngine } from '../backrun/backrun-engine.ts'
import type { ChainStateSource, Hex } from '../chain/types.ts'
import { signHash } from '../crypto/sign.ts'
import type { Simulator } from '../evm/simulator.ts'
import type { BackrunTransactionRequest, BackrunTransactionSigner } from './backrun-signer.ts'
import { planBackrun, planningSettings, type BackrunPlanning } from './backrun-planning.ts'
import type { BackrunPlan, BackrunPlanInput, BackrunPlanner } from './dispatcher-ports.ts'
import { searcherKeyLeases } from './searcher-key-leases.ts'
import { SearcherKeyPool } from './searcher-key-pool.ts'

export type { BackrunTransactionRequest, BackrunTransactionSigner } from './backrun-signer.ts'
export { BackrunPlanError, backrunTip, type BackrunPlanErrorReason } from './backrun-planning.ts'

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

export class EngineBackrunPlanner implements BackrunPlanner {
  readonly keys: SearcherKeyPool
  private readonly planning: BackrunPlanning

  /** @throws TypeError / RangeError for a bad option */
  constructor(options: EngineBackrunPlannerOptions) {
    const signers = options.signer instanceof SearcherKeyPool ? options.signer.signers : [options.signer]
    for (const signer of signers) {
      if (typeof signer?.signTransaction !== 'function' || !/^0x[0-9a-fA-F]{40}$/.test(signer.address)) {
        throw new TypeError('EngineBackrunPlanner: signer must have an address and signTransaction')
      }
    }
    const settings = planningSettings(options, 'EngineBackrunPlanner')
    this.keys = options.signer instanceof SearcherKeyPool ? options.signer : new SearcherKeyPool(signers)
    this.planning = { chain: options.chain, simulator: options.simulator, engine: options.engine, keys: searcherKeyLeases(this.keys), settings }
  }

  release(id: string, block: bigint): void {
    this.keys.release(block, id)
  }

  plan(input: BackrunPlanInput): Promise<BackrunPlan | null> {
    return planBackrun(this.planning, input)
  }
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
