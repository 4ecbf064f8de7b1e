/**
 * eth_backrun (spec 2.6, 2.7, 4.2): validates the user transaction, asks the backrun service, and
 * puts the answer on the wire. Each missing or malformed field is a -32000 naming it; the first
 * problem found is reported (the JSON-RPC error has one message), fields in the spec's order.
 */
import type { BackrunFound, BackrunRequest, BackrunService } from '../../backrun/types.ts'
import { USD_DECIMALS } from '../../backrun/types.ts'
import type { Address, Hex } from '../../chain/types.ts'
import { InvalidParamsError, type JsonRpcMethodHandler } from '../jsonrpc/index.ts'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const HEX = /^0x(?:[0-9a-fA-F]{2})*$/
const POSITIVE = /^[1-9]\d*$/
const NON_NEGATIVE = /^(?:0|[1-9]\d*)$/
const MAX_UINT256 = (1n << 256n) - 1n
/** calldata accepted at most: 128 KiB of bytes, as for a signed transaction */
export const MAX_BACKRUN_CALLDATA_BYTES = 128 * 1024
const FIELDS = new Set(['to', 'calldata', 'value', 'tokenIn', 'amountIn'])

export function parseBackrunParams(params: Record<string, unknown>): BackrunRequest {
  const address = (name: 'to' | 'tokenIn'): Address => {
    const v = params[name]
    if (v === undefined || v === null) throw new InvalidParamsError(`missing field: ${name}`)
    if (typeof v !== 'string' || !ADDRESS.test(v)) throw new InvalidParamsError(`${name} must be a 0x-prefixed 20-byte hex address`)
    return v.toLowerCase() as Address
  }
  const amount = (name: 'value' | 'amountIn', pattern: RegExp, what: string): bigint | undefined => {
    const v = params[name]
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string' || !pattern.test(v) || v.length > 78 || BigInt(v) > MAX_UINT256) throw new InvalidParamsError(`${name} must be ${what} (uint256, decimal string)`)
    return BigInt(v)
  }
  const to = address('to')
  const calldata = params.calldata
  if (calldata === undefined || calldata === null) throw new InvalidParamsError('missing field: calldata')
  if (typeof calldata !== 'string' || !HEX.test(calldata)) throw new InvalidParamsError('calldata must be a 0x-prefixed hex string of whole bytes')
  if ((calldata.length - 2) / 2 > MAX_BACKRUN_CALLDATA_BYTES) throw new InvalidParamsError(`calldata must be at most ${MAX_BACKRUN_CALLDATA_BYTES} bytes`)
  const value = amount('value', NON_NEGATIVE, 'a non-negative integer') ?? 0n
  const tokenIn = address('tokenIn')
  const amountIn = amount('amountIn', POSITIVE, 'a positive integer without leading zeros')
  if (amountIn === undefined) throw new InvalidParamsError('missing field: amountIn')
  for (const name of Object.keys(params)) {
    if (!FIELDS.has(name)) throw new InvalidParamsError(`unknown field: ${name.length > 40 ? `${name.slice(0, 40)}...` : name}`)
  }
  return { to, calldata: calldata.toLowerCase() as Hex, value, tokenIn, amountIn }
}

/** wei as ETH, exact: up to 18 decimals, no trailing zeros, a leading '-' when negative */
export function formatEth(wei: bigint): string {
  return formatFixed(wei, 18)
}

export function formatFixed(value: bigint, decimals: number): string {
  const negative = value < 0n
  const abs = negative ? -value : value
  const scale = 10n ** BigInt(decimals)
  const whole = abs / scale
  const fraction = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}

export function toWireBackrun(found: BackrunFound) {
  return {
    calldata: found.calldata,
    contract: found.contract,
    gas: Number(found.gas),
    profitToken: found.profitToken,
    grossProfit: found.grossProfit.toString(),
    netProfitEth: formatEth(found.netProfitWei),
    netProfitUsd: formatFixed(found.netProfitUsd, USD_DECIMALS),
    // additive
    amountIn: found.amountIn.toString(),
    blockNumber: found.blockNumber.toString(),
    hops: found.hops,
  }
}

/**
 * An execution of the request stopped by the execution budget (EVM_MAX_GAS, EVM_MAX_MS: the
 * user's call loops, ...) is a -32000 naming the budget, `data` `{ reason: 'execution_budget',
 * budget: 'gas' | 'time', limit }`.
 */
export function backrunMethod(service: BackrunService): JsonRpcMethodHandler {
  return async (params) => {
    const request = parseBackrunParams(params)
    // an ExecutionBudgetError is answered by the server's error table (../errors/error-answers.ts)
    const found = await service.backrun(request)
    return found === null ? null : toWireBackrun(found)
  }
}
