/**
 * The gas a transaction needs before execution (intrinsic gas, or the EIP-7623 calldata floor when
 * higher): the value of ethereumjs' `tx.getMinimumGasLimit()`, computed from the decoded fields
 * with one pass over the calldata in plain numbers.
 *
 * Why not ethereumjs' own: its intrinsic-gas and floor loops add a BigInt per calldata byte
 * (`cost += txDataNonZero`, twice: `getDataGas` and `countCalldataFloorTokens`), and every BigInt
 * sum is a new heap object. Under bench:submit that was ~26 KB of garbage per decoded swap (352
 * bytes of calldata), a third of the acknowledgement's decode and a tenth of all the garbage the
 * main thread made per acknowledgement (a sampling heap profile, 2026-11-27), and the decode runs
 * on the thread that acknowledges.
 *
 * The rules carried here are those of every hardfork ethereumjs knows up to Osaka (and its BPO
 * forks): txGas, calldata at txDataZeroGas / txDataNonZeroGas, contract creation (txCreationGas,
 * EIP-3860 init code words), access lists (EIP-2930), EIP-7702 authorizations at
 * perEmptyAccountCost, and the EIP-7623 floor. Where an EIP that changes them is active (EIP-2780's
 * recipient costs, EIP-7976 / EIP-7981's floor tokens, EIP-8037 / EIP-8038's gas dimensions:
 * Amsterdam), ethereumjs computes it. test/tx/decode/minimum-gas.test.ts checks the two agree on
 * every transaction type at every hardfork.
 */
import type { Common } from '@ethereumjs/common'
import type { TypedTransaction } from '@ethereumjs/tx'

import type { RawFields } from './fields.ts'

/** EIPs that change the intrinsic gas or the floor in ways not carried here */
const UNMODELLED_EIPS = [2780, 7976, 7981, 8037, 8038] as const

/** Whether {@link minimumGasLimit} computes `common`'s rules itself (otherwise it asks ethereumjs). */
export function modelsMinimumGas(common: Common): boolean {
  return !UNMODELLED_EIPS.some((eip) => common.isActivatedEIP(eip))
}

/** `tx.getMinimumGasLimit()` for the transaction `fields` were decoded from (`tx` built from the same bytes). */
export function minimumGasLimit(fields: RawFields, tx: TypedTransaction): bigint {
  const common = tx.common
  if (!modelsMinimumGas(common)) return tx.getMinimumGasLimit()
  const { data } = fields
  let zeros = 0
  for (let i = 0; i < data.length; i++) if (data[i] === 0) zeros++
  const nonZeros = data.length - zeros
  const param = (name: string): bigint => common.param(name)

  const txGas = param('txGas')
  let intrinsic = txGas + BigInt(zeros) * param('txDataZeroGas') + BigInt(nonZeros) * param('txDataNonZeroGas')
  // a set-code transaction cannot create (ethereumjs' toCreationAddress throws for it)
  if (fields.to === null && fields.type !== 4) {
    if (common.isActivatedEIP(3860)) intrinsic += param('initCodeWordGas') * BigInt(Math.ceil(data.length / 32))
    if (common.gteHardfork('homestead')) intrinsic += param('txCreationGas')
  }
  if (fields.type !== 0) {
    let slots = 0
    for (const [, keys] of fields.accessList) slots += keys.length
    intrinsic += BigInt(fields.accessList.length) * param('accessListAddressGas') + BigInt(slots) * param('accessListStorageKeyGas')
  }
  if (fields.type === 4) intrinsic += BigInt(fields.authorizationList.length) * param('perEmptyAccountCost')
  if (!common.isActivatedEIP(7623)) return intrinsic

  const floor = txGas + param('totalCostFloorPerToken') * BigInt(zeros + 4 * nonZeros)
  return floor > intrinsic ? floor : intrinsic
}
