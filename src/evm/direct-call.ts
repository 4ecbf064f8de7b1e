/**
 * An eth_call-style call run with `evm.runCall` instead of `runTx`: what runTx does for an
 * unsigned, zero-price call from any sender (nonce and balance checks skipped), without what a call
 * never needs: building a transaction (a Common copy per call), fee validation, the logs bloom, the
 * receipt. Measured: about a fifth of a warm swap simulation.
 *
 * Kept, in runTx's order (`@ethereumjs/vm` runTx.js `_runTx`), so that gas, return data, logs and
 * the resulting state are exactly runTx's:
 * - EIP-2929 warm set: precompiles, caller, target; the coinbase with EIP-3651;
 * - intrinsic gas (base + calldata bytes) and the EIP-7623 calldata floor;
 * - the sender topped up to the value it sends, its nonce bumped (runTx bumps it before running,
 *   and a call's state can be chained on);
 * - the refund cap (EIP-3529 quotient), the floor applied after it;
 * - the coinbase touched by its zero fee (EIP-161: an empty coinbase is removed by the cleanup);
 * - selfdestructs (EIP-6780: only accounts created in the call), the journal cleanup of touched
 *   empty accounts, the original-storage cache cleared.
 *
 * Anything runTx would reject or treat differently is left to runTx (`undefined` is returned
 * before anything is written): contract creation, a sender with code (EIP-3607), a gas limit
 * below the intrinsic gas or above the block's or the EIP-7825 cap, values out of range, and chains
 * with rules this path does not implement (EIP-2780 intrinsic extras, 7976/7981 floor tokens,
 * stateless witnesses, block access lists, EIP-8037 state gas, EIP-7708/8246 selfdestruct,
 * proof of authority). Signed transactions always take the full runTx path.
 */
import type { Block } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import type { EVMResult, ExecResult } from '@ethereumjs/evm'
import { paramsTx } from '@ethereumjs/tx'
import { Account, Address as EjsAddress, KECCAK256_NULL, bytesToUnprefixedHex, equalsBytes, hexToBytes } from '@ethereumjs/util'
import type { VM } from '@ethereumjs/vm'

export interface DirectCall {
  caller: EjsAddress
  to: EjsAddress
  data: Uint8Array
  value: bigint
  gasLimit: bigint
}

/** What the simulator reads of a call's or a transaction's result. */
export interface CallRunResult {
  execResult: ExecResult
  /** receipt gas: intrinsic + execution - capped refund, EIP-7623 floor applied */
  totalGasSpent: bigint
  createdAddress?: EjsAddress
}

/** EIPs whose rules this path does not implement: a call on such a chain goes through runTx. */
const RUNTX_ONLY_EIPS = [2780, 6800, 7708, 7864, 7928, 7976, 7981, 8037, 8246]
const MAX_UINT256 = 2n ** 256n - 1n

interface CallRules {
  hardfork: string
  supported: boolean
  txGas: bigint
  dataZeroGas: bigint
  dataNonZeroGas: bigint
  /** EIP-7623 per-token floor, undefined before Prague */
  floorPerToken?: bigint
  /** EIP-7825 transaction gas cap, undefined before Osaka */
  maxGasLimit?: bigint
  maxRefundQuotient: bigint
  eip2929: boolean
  eip3651: boolean
  eip6780: boolean
}

const rulesByCommon = new WeakMap<Common, CallRules>()

/** The parameters of the common's current hardfork, read once per hardfork (as createTx reads them: a copy with the tx parameters). */
function callRules(common: Common): CallRules {
  const hardfork = common.hardfork()
  const cached = rulesByCommon.get(common)
  if (cached !== undefined && cached.hardfork === hardfork) return cached
  const txCommon = common.copy()
  txCommon.updateParams(paramsTx)
  const rules: CallRules = {
    hardfork,
    supported: !RUNTX_ONLY_EIPS.some((eip) => common.isActivatedEIP(eip)) && common.consensusType() !== 'poa',
    txGas: txCommon.param('txGas'),
    dataZeroGas: txCommon.param('txDataZeroGas'),
    dataNonZeroGas: txCommon.param('txDataNonZeroGas'),
    floorPerToken: txCommon.isActivatedEIP(7623) ? txCommon.param('totalCostFloorPerToken') : undefined,
    maxGasLimit: txCommon.isActivatedEIP(7825) ? txCommon.param('maxTransactionGasLimit') : undefined,
    maxRefundQuotient: common.param('maxRefundQuotient'),
    eip2929: common.isActivatedEIP(2929),
    eip3651: common.isActivatedEIP(3651),
    eip6780: common.isActivatedEIP(6780),
  }
  rulesByCommon.set(common, rules)
  return rules
}

/** Intrinsic gas and the EIP-7623 floor of a call (no creation, no access list). */
export function callIntrinsicGas(common: Common, data: Uint8Array): { intrinsic: bigint; floor: bigint } {
  const rules = callRules(common)
  let zeros = 0
  for (let i = 0; i < data.length; i++) if (data[i] === 0) zeros++
  const nonZeros = data.length - zeros
  const intrinsic = rules.txGas + BigInt(zeros) * rules.dataZeroGas + BigInt(nonZeros) * rules.dataNonZeroGas
  const floor = rules.floorPerToken === undefined ? 0n : rules.txGas + rules.floorPerToken * BigInt(zeros + 4 * nonZeros)
  return { intrinsic, floor }
}

/**
 * Runs `call` on `vm` (bound to the call's state) in `block`, or returns undefined, having written
 * nothing, when runTx must run it instead.
 */
export async function runDirectCall(vm: VM, block: Block, call: DirectCall): Promise<CallRunResult | undefined> {
  const common = vm.common
  const rules = callRules(common)
  if (!rules.supported || vm.DEBUG) return undefined
  const { caller, to, data, value, gasLimit } = call
  if (value < 0n || value > MAX_UINT256 || gasLimit > block.header.gasLimit) return undefined
  if (rules.maxGasLimit !== undefined && gasLimit > rules.maxGasLimit) return undefined
  const { intrinsic, floor } = callIntrinsicGas(common, data)
  if (gasLimit < intrinsic || gasLimit < floor) return undefined

  const state = vm.stateManager
  const journal = vm.evm.journal
  const sender = (await state.getAccount(caller)) ?? new Account()
  if (!equalsBytes(sender.codeHash, KECCAK256_NULL)) return undefined

  await journal.cleanup()
  if (rules.eip2929) {
    for (const address of vm.evm.precompiles.keys()) journal.addAlwaysWarmAddress(address)
    journal.addAlwaysWarmAddress(caller.toString())
    journal.addAlwaysWarmAddress(bytesToUnprefixedHex(to.bytes))
    if (rules.eip3651) journal.addAlwaysWarmAddress(bytesToUnprefixedHex(block.header.coinbase.bytes))
  }
  try {
    if (sender.balance < value) sender.balance = value
    sender.nonce += 1n
    await journal.putAccount(caller, sender)

    const result: EVMResult = await vm.evm.runCall({
      block,
      gasPrice: 0n,
      caller,
      gasLimit: gasLimit - intrinsic,
      to,
      value,
      data,
      skipNonceIncrement: true,
    })
    const exec = result.execResult

    let totalGasSpent = exec.executionGasUsed + intrinsic
    const refund = exec.gasRefund ?? 0n
    if (refund !== 0n) {
      const maxRefund = totalGasSpent / rules.maxRefundQuotient
      totalGasSpent -= refund < maxRefund ? refund : maxRefund
    }
    if (rules.floorPerToken !== undefined && totalGasSpent < floor) totalGasSpent = floor

    // the zero fee still touches the coinbase
    const coinbase = block.header.coinbase
    await journal.putAccount(coinbase, (await state.getAccount(coinbase)) ?? new Account())

    if (exec.selfdestruct !== undefined) {
      for (const hex of exec.selfdestruct.keys()) {
        const address = new EjsAddress(hexToBytes(hex as `0x${string}`))
        if (rules.eip6780 && exec.createdAddresses?.has(address.toString()) !== true) continue
        await journal.deleteAccount(address)
      }
    }
    await journal.cleanup()
    return { execResult: exec, totalGasSpent, createdAddress: result.createdAddress }
  } finally {
    if (rules.eip2929) journal.cleanJournal()
    state.originalStorageCache.clear()
  }
}
