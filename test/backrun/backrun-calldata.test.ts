/**
 * encodeBackrunCall: the cycle -> BackrunExecutor.backrun calldata mapping, field by field, the
 * cycle rules it checks before the contract would revert, and the decoders of the result, the
 * event and the contract's errors. (Execution on the devnet is test/contracts/backrun-executor.anvil.test.ts.)
 */
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeErrorResult,
  encodeEventTopics,
  encodeFunctionData,
  encodeFunctionResult,
  getAddress,
  toFunctionSelector,
  toFunctionSignature,
  type AbiFunction,
  type Hex,
} from 'viem'
import { describe, expect, it } from 'vitest'
import artifact from '../../src/contracts/artifacts/BackrunExecutor.json' with { type: 'json' }
import {
  BACKRUN_EVENT_TOPIC,
  BACKRUN_EXECUTOR_ABI,
  BACKRUN_PROTOCOL_V4_NATIVE,
  BACKRUN_PROTOCOL,
  InvalidBackrunError,
  REFUND_TO_TX_ORIGIN,
  checkBackrun,
  decodeBackrunEvents,
  decodeBackrunResult,
  decodeBackrunRevert,
  encodeBackrunCall,
  encodeBackrunExactCall,
  splitBackrunProfit,
  toExactBackrunCall,
  type BackrunCallParams,
  type BackrunExactCallParams,
} from '../../src/backrun/backrun-calldata.ts'
import type { PlanHop } from '../../src/routing/swap-plan.ts'

// addresses in ascending order: A < B < C
const A = '0x1000000000000000000000000000000000000001' as const
const B = '0x2000000000000000000000000000000000000002' as const
const C = '0x3000000000000000000000000000000000000003' as const
const POOL_1 = '0xa000000000000000000000000000000000000001' as const
const POOL_2 = '0xa000000000000000000000000000000000000002' as const
const POOL_3 = '0xa000000000000000000000000000000000000003' as const
const EXECUTOR = '0x00000000000000000000000000000000000e8ec0' as const
const ZERO = '0x0000000000000000000000000000000000000000' as const
const USER = '0x00000000000000000000000000000000000005e4' as const

const hop = (protocol: PlanHop['protocol'], pool: Hex, tokenIn: Hex, tokenOut: Hex, fee = 3000): PlanHop => ({
  protocol,
  pool,
  tokenIn,
  tokenOut,
  fee,
  zeroForOne: BigInt(tokenIn) < BigInt(tokenOut),
})

/** B -> A on a V3 0.05% pool, A -> B back on a V2 pair */
const twoHops = (): BackrunCallParams => ({
  startToken: B,
  amountIn: 10n ** 18n,
  hops: [hop('uniswap-v3', POOL_1, B, A, 500), hop('uniswap-v2', POOL_2, A, B)],
  minProfit: 12_345n,
  refundBps: 2500,
})

/** A -> B (V2) -> C (V3 1%) -> A (V3 0.3%) */
const triangle = (): BackrunCallParams => ({
  startToken: A,
  amountIn: 5_000_000n,
  hops: [hop('uniswap-v2', POOL_1, A, B), hop('uniswap-v3', POOL_2, B, C, 10000), hop('uniswap-v3', POOL_3, C, A, 3000)],
  minProfit: 0n,
  refundBps: 0,
})

const POOL_MANAGER = '0xb000000000000000000000000000000000000004' as const
const POOL_ID_1 = `0x${'c1'.repeat(32)}` as Hex
const POOL_ID_2 = `0x${'c2'.repeat(32)}` as Hex
const v4hop = (pool: Hex, tokenIn: Hex, tokenOut: Hex, fee: number, tickSpacing: number): PlanHop => ({ ...hop('uniswap-v4', pool, tokenIn, tokenOut, fee), v4: { poolManager: POOL_MANAGER, tickSpacing } })

/** A -> B (V4 0.12%, spacing 24) -> C (V4 0.05%, spacing 10) -> A (V2) */
const v4Triangle = (): BackrunCallParams => ({
  startToken: A,
  amountIn: 5_000_000n,
  hops: [v4hop(POOL_ID_1, A, B, 1200, 24), v4hop(POOL_ID_2, B, C, 500, 10), hop('uniswap-v2', POOL_3, C, A)],
  minProfit: 0n,
  refundBps: 0,
})

const decode = (data: Hex) => decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data })

/** The InvalidBackrunError `params` throws, for its message to be checked. */
function rejection(params: BackrunCallParams): InvalidBackrunError {
  try {
    encodeBackrunCall(params)
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidBackrunError)
    expect(() => checkBackrun(params)).toThrow(InvalidBackrunError)
    return err as InvalidBackrunError
  }
  throw new Error(`expected InvalidBackrunError for ${JSON.stringify(params, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`)
}

describe('encodeBackrunCall', () => {
  // (that the committed artifact is what the source compiles to is test/devnet/contract-artifacts.test.ts)
  it('uses the ABI of the committed artifact, with the documented signature, event and errors', () => {
    expect(BACKRUN_EXECUTOR_ABI).toEqual(artifact.abi)
    const fn = BACKRUN_EXECUTOR_ABI.find((x): x is AbiFunction => x.type === 'function' && x.name === 'backrun')!
    expect(toFunctionSignature(fn)).toBe('backrun(address,uint256,(uint8,address,address,uint24,int24,address)[],uint256,uint16,address)')
    expect(fn.stateMutability).toBe('nonpayable')
    expect(fn.outputs).toEqual([{ name: 'grossProfit', type: 'uint256', internalType: 'uint256' }])
    expect(encodeBackrunCall(twoHops()).slice(0, 10)).toBe(toFunctionSelector(fn))
    const names = (type: string) => BACKRUN_EXECUTOR_ABI.filter((x) => x.type === type).map((x) => ('name' in x ? x.name : '')).sort()
    expect(names('function')).toEqual(['MAX_VENUES_PER_KIND', 'backrun', 'backrunExact', 'beneficiary', 'pancakeCall', 'pancakeV3SwapCallback', 'poolManager', 'uniswapV2Call', 'uniswapV3SwapCallback', 'unlockCallback', 'v2Venues', 'v3Venues', 'weth'])
    expect(names('event')).toEqual(['Backrun'])
    expect(names('error')).toEqual([
      'AmountTooLarge',
      'CycleNotClosed',
      'InsufficientProfit',
      'InvalidAmountIn',
      'InvalidBeneficiary',
      'InvalidHopCount',
      'InvalidPool',
      'InvalidProtocol',
      'InvalidRefundBps',
      'InvalidRefundRecipient',
      'InvalidVenues',
      'PartialFill',
      'ProfitMismatch',
      'Reentrancy',
      'TransferFailed',
      'UnexpectedCallback',
      'UnexpectedEth',
    ])
  })

  it('round-trips through decodeFunctionData field by field; protocol 0 = V2, 1 = V3; no tokenIn or zeroForOne per hop', () => {
    const { functionName, args } = decode(encodeBackrunCall(twoHops()))
    expect(functionName).toBe('backrun')
    expect(args).toEqual([
      getAddress(B),
      10n ** 18n,
      [
        { protocol: 1, pool: getAddress(POOL_1), tokenOut: getAddress(A), fee: 500, tickSpacing: 0, hooks: ZERO },
        { protocol: 0, pool: getAddress(POOL_2), tokenOut: getAddress(B), fee: 3000, tickSpacing: 0, hooks: ZERO },
      ],
      12_345n,
      2500,
      ZERO,
    ])
    const t = decode(encodeBackrunCall(triangle()))
    expect(t.args).toEqual([
      getAddress(A),
      5_000_000n,
      [
        { protocol: 0, pool: getAddress(POOL_1), tokenOut: getAddress(B), fee: 3000, tickSpacing: 0, hooks: ZERO },
        { protocol: 1, pool: getAddress(POOL_2), tokenOut: getAddress(C), fee: 10000, tickSpacing: 0, hooks: ZERO },
        { protocol: 1, pool: getAddress(POOL_3), tokenOut: getAddress(A), fee: 3000, tickSpacing: 0, hooks: ZERO },
      ],
      0n,
      0,
      ZERO,
    ])
    expect(BACKRUN_PROTOCOL).toEqual({ 'uniswap-v2': 0, 'uniswap-v3': 1, 'uniswap-v4': 2 })
  })

  it('encodes a V4 hop as protocol 2 on its PoolManager with its fee and tick spacing; two V4 pools may share a cycle', () => {
    const t = decode(encodeBackrunCall(v4Triangle()))
    expect(t.args).toEqual([
      getAddress(A),
      5_000_000n,
      [
        { protocol: 2, pool: getAddress(POOL_MANAGER), tokenOut: getAddress(B), fee: 1200, tickSpacing: 24, hooks: ZERO },
        { protocol: 2, pool: getAddress(POOL_MANAGER), tokenOut: getAddress(C), fee: 500, tickSpacing: 10, hooks: ZERO },
        { protocol: 0, pool: getAddress(POOL_3), tokenOut: getAddress(A), fee: 3000, tickSpacing: 0, hooks: ZERO },
      ],
      0n,
      0,
      ZERO,
    ])
  })

  it('rejects a V4 hop without its PoolManager and a valid spacing, one whose pool is not a PoolId, a native-ETH currency, the same V4 pool twice', () => {
    const p = v4Triangle()
    const [h0, h1, h2] = p.hops as [PlanHop, PlanHop, PlanHop]
    expect(rejection({ ...p, hops: [{ ...h0, v4: undefined }, h1, h2] }).message).toMatch(/hop 0: a V4 hop names its PoolManager and tick spacing/)
    expect(rejection({ ...p, hops: [{ ...h0, v4: { poolManager: POOL_MANAGER, tickSpacing: 0 } }, h1, h2] }).message).toMatch(/hop 0: tick spacing 0 is not a V4 spacing/)
    expect(rejection({ ...p, hops: [{ ...h0, v4: { poolManager: POOL_MANAGER, tickSpacing: 32_768 } }, h1, h2] }).message).toMatch(/tick spacing 32768/)
    expect(rejection({ ...p, hops: [{ ...h0, v4: { poolManager: '0x1234', tickSpacing: 24 } }, h1, h2] }).message).toMatch(/hop 0 PoolManager 0x1234 is not an address/)
    expect(rejection({ ...p, hops: [{ ...h0, pool: POOL_1 }, h1, h2] }).message).toMatch(/hop 0: V4 pool 0xa0.* is not a PoolId/)
    expect(rejection({ ...p, hops: [h0, h1, { ...h2, v4: { poolManager: POOL_MANAGER, tickSpacing: 60 } }] }).message).toMatch(/hop 2: a uniswap-v2 hop names a PoolManager/)
    expect(rejection({ ...p, hops: [h0, { ...h1, pool: POOL_ID_1 }, h2] }).message).toMatch(/hop 1 uses pool .* a second time/)
    const native = { ...p, startToken: ZERO, hops: [{ ...h0, tokenIn: ZERO, zeroForOne: true }, h1, { ...h2, tokenOut: ZERO, zeroForOne: false }] }
    expect(rejection(native).message).toMatch(/hop 0: native ETH/)
    expect(rejection({ ...p, hops: [{ ...h0, v4: { poolManager: POOL_MANAGER, tickSpacing: 24, hooks: '0x1234' } }, h1, h2] }).message).toMatch(/hop 0 hooks 0x1234 is not an address/)
  })

  it('encodes a native-ETH V4 hop as protocol 3 (WETH in the cycle, ETH in the key) and a hooked one with its hooks address', () => {
    const p = v4Triangle()
    const [h0, h1, h2] = p.hops as [PlanHop, PlanHop, PlanHop]
    const HOOKS = '0x0000000000000000000000000000000000004080' as Hex
    const t = decode(encodeBackrunCall({ ...p, hops: [{ ...h0, v4: { ...h0.v4!, nativeEth: true } }, { ...h1, v4: { ...h1.v4!, hooks: HOOKS, hookAltersSwap: true } }, h2] }))
    expect(t.args![2]).toEqual([
      { protocol: 3, pool: getAddress(POOL_MANAGER), tokenOut: getAddress(B), fee: 1200, tickSpacing: 24, hooks: ZERO },
      { protocol: 2, pool: getAddress(POOL_MANAGER), tokenOut: getAddress(C), fee: 500, tickSpacing: 10, hooks: getAddress(HOOKS) },
      { protocol: 0, pool: getAddress(POOL_3), tokenOut: getAddress(A), fee: 3000, tickSpacing: 0, hooks: ZERO },
    ])
    expect(BACKRUN_PROTOCOL_V4_NATIVE).toBe(3)
  })

  it('encodes refundRecipient as the sixth argument: omitted or undefined = the zero address (tx.origin), else the address given', () => {
    const args = (p: BackrunCallParams) => decode(encodeBackrunCall(p)).args!
    expect(REFUND_TO_TX_ORIGIN).toBe(ZERO)
    expect(args(twoHops())).toHaveLength(6)
    expect(args(twoHops())[5]).toBe(ZERO)
    expect(args({ ...twoHops(), refundRecipient: undefined })[5]).toBe(ZERO)
    expect(args({ ...twoHops(), refundRecipient: ZERO })[5]).toBe(ZERO)
    expect(args({ ...twoHops(), refundRecipient: USER })[5]).toBe(getAddress(USER))
    expect(args({ ...twoHops(), refundRecipient: getAddress(USER) })[5]).toBe(getAddress(USER))
    // the other fields are unchanged by it, and omitting it is the same calldata as passing zero
    expect(args({ ...twoHops(), refundRecipient: USER }).slice(0, 5)).toEqual(args(twoHops()).slice(0, 5))
    expect(encodeBackrunCall({ ...twoHops(), refundRecipient: ZERO })).toBe(encodeBackrunCall(twoHops()))
    // the sixth word of the head (after the selector) is the recipient, left-padded; the hops' tail follows
    const head = encodeBackrunCall({ ...twoHops(), refundRecipient: USER }).slice(10)
    expect(head.slice(5 * 64, 6 * 64)).toBe(USER.slice(2).padStart(64, '0'))
  })

  it('accepts the bounds: refundBps 0 and 10000, amountIn 1 and 2^255 - 1, minProfit 2^256 - 1, checksummed or lower-case addresses', () => {
    const ok = (p: BackrunCallParams) => decode(encodeBackrunCall(p)).args!
    expect(ok({ ...twoHops(), refundBps: 10_000 })[4]).toBe(10_000)
    expect(ok({ ...twoHops(), refundBps: 0 })[4]).toBe(0)
    expect(ok({ ...twoHops(), amountIn: 1n })[1]).toBe(1n)
    expect(ok({ ...twoHops(), amountIn: (1n << 255n) - 1n })[1]).toBe((1n << 255n) - 1n)
    expect(ok({ ...twoHops(), minProfit: (1n << 256n) - 1n })[3]).toBe((1n << 256n) - 1n)
    const p = twoHops()
    const mixed: BackrunCallParams = { ...p, startToken: getAddress(B), hops: [p.hops[0]!, { ...p.hops[1]!, tokenOut: getAddress(B) }] }
    expect(ok(mixed)[0]).toBe(getAddress(B))
  })

  it('rejects a cycle of fewer than 2 or more than 3 hops', () => {
    const p = twoHops()
    expect(rejection({ ...p, hops: [] }).message).toMatch(/2 or 3 hops, not 0/)
    expect(rejection({ ...p, hops: [p.hops[0]!] }).message).toMatch(/2 or 3 hops, not 1/)
    const four = [hop('uniswap-v2', POOL_1, B, A), hop('uniswap-v2', POOL_2, A, B), hop('uniswap-v2', POOL_3, B, A), hop('uniswap-v3', POOL_1, A, B, 500)]
    expect(rejection({ ...p, hops: four }).message).toMatch(/2 or 3 hops, not 4/)
  })

  it('rejects hops that do not chain, do not start at startToken, or do not close on it', () => {
    const p = twoHops()
    // first hop does not start at startToken
    let e = rejection({ ...p, startToken: C })
    expect(e.message).toMatch(/hop 0 starts in 0x2000.*but the cycle is at 0x3000/)
    expect(e.details).toEqual({ hop: 0 })
    // a gap between hops
    e = rejection({ ...p, hops: [p.hops[0]!, hop('uniswap-v2', POOL_2, C, B)] })
    expect(e.message).toMatch(/hop 1 starts in 0x3000.*but the cycle is at 0x1000/)
    expect(e.details).toEqual({ hop: 1 })
    // does not come back to startToken
    e = rejection({ ...p, hops: [p.hops[0]!, hop('uniswap-v2', POOL_2, A, C)] })
    expect(e.message).toMatch(/ends in 0x3000.*not in startToken 0x2000/)
    // a hop that swaps a token for itself
    e = rejection({ ...p, startToken: A, hops: [hop('uniswap-v2', POOL_1, A, A), hop('uniswap-v3', POOL_2, A, A, 500)] })
    expect(e.message).toMatch(/hop 0 swaps .* for itself/)
  })

  it('rejects a hop whose zeroForOne disagrees with the token order, an unknown protocol, a bad fee, a reused pool', () => {
    const p = twoHops()
    expect(rejection({ ...p, hops: [{ ...p.hops[0]!, zeroForOne: true }, p.hops[1]!] }).message).toMatch(/hop 0: zeroForOne true disagrees/)
    expect(rejection({ ...p, hops: [p.hops[0]!, { ...p.hops[1]!, protocol: 'curve' as PlanHop['protocol'] }] }).message).toMatch(/hop 1: unknown protocol curve/)
    expect(rejection({ ...p, hops: [p.hops[0]!, { ...p.hops[1]!, protocol: 'toString' as PlanHop['protocol'] }] }).message).toMatch(/unknown protocol toString/)
    expect(rejection({ ...p, hops: [{ ...p.hops[0]!, fee: 1 << 24 }, p.hops[1]!] }).message).toMatch(/fee 16777216 is not a uint24/)
    expect(rejection({ ...p, hops: [{ ...p.hops[0]!, fee: 0.5 }, p.hops[1]!] }).message).toMatch(/fee 0.5 is not a uint24/)
    expect(rejection({ ...p, hops: [{ ...p.hops[0]!, fee: -1 }, p.hops[1]!] }).message).toMatch(/fee -1 is not a uint24/)
    expect(rejection({ ...p, hops: [p.hops[0]!, { ...p.hops[1]!, pool: POOL_1.toUpperCase().replace('0X', '0x') as Hex }] }).message).toMatch(/hop 1 uses pool .* a second time/)
  })

  it('rejects amounts and refunds the contract would refuse, and malformed addresses', () => {
    const p = twoHops()
    expect(rejection({ ...p, amountIn: 0n }).message).toMatch(/amountIn 0 is not in 1\.\.2\^255-1/)
    expect(rejection({ ...p, amountIn: -1n }).message).toMatch(/amountIn -1/)
    expect(rejection({ ...p, amountIn: 1n << 255n }).details).toEqual({ amountIn: 1n << 255n })
    expect(rejection({ ...p, amountIn: 5 as unknown as bigint }).message).toMatch(/amountIn 5 is not/)
    expect(rejection({ ...p, minProfit: -1n }).message).toMatch(/minProfit -1 is not a uint256/)
    expect(rejection({ ...p, minProfit: 1n << 256n }).message).toMatch(/is not a uint256/)
    expect(rejection({ ...p, refundBps: 10_001 }).message).toMatch(/refundBps 10001 is not an integer in 0\.\.10000/)
    expect(rejection({ ...p, refundBps: -1 }).message).toMatch(/refundBps -1/)
    expect(rejection({ ...p, refundBps: 12.5 }).message).toMatch(/refundBps 12.5/)
    expect(rejection({ ...p, startToken: '0x1234' }).message).toMatch(/startToken 0x1234 is not an address/)
    expect(rejection({ ...p, refundRecipient: '0x1234' }).message).toMatch(/refundRecipient 0x1234 is not an address/)
    expect(rejection({ ...p, refundRecipient: '0x1234' }).details).toEqual({ refundRecipient: '0x1234' })
    expect(rejection({ ...p, hops: [{ ...p.hops[0]!, pool: '0xzz00000000000000000000000000000000000001' }, p.hops[1]!] }).message).toMatch(/hop 0 pool .* is not an address/)
  })
})

describe('encodeBackrunExactCall and toExactBackrunCall', () => {
  const exact = (p: BackrunCallParams, expectedProfit: bigint): BackrunExactCallParams => {
    const { minProfit: _dropped, ...rest } = p
    return { ...rest, expectedProfit }
  }

  it('backrunExact has backrun\'s arguments with expectedProfit in minProfit\'s place, the same return value, and its own selector', () => {
    const fn = BACKRUN_EXECUTOR_ABI.find((x): x is AbiFunction => x.type === 'function' && x.name === 'backrunExact')!
    expect(toFunctionSignature(fn)).toBe('backrunExact(address,uint256,(uint8,address,address,uint24,int24,address)[],uint256,uint16,address)')
    expect(fn.inputs.map((i) => i.name)).toEqual(['startToken', 'amountIn', 'hops', 'expectedProfit', 'refundBps', 'refundRecipient'])
    expect(fn.stateMutability).toBe('nonpayable')
    expect(fn.outputs).toEqual([{ name: 'grossProfit', type: 'uint256', internalType: 'uint256' }])
    const data = encodeBackrunExactCall(exact(twoHops(), 777n))
    expect(data.slice(0, 10)).toBe(toFunctionSelector(fn))
    expect(data.slice(0, 10)).not.toBe(encodeBackrunCall(twoHops()).slice(0, 10))
    // the return value decodes alike
    expect(decodeBackrunResult(encodeFunctionResult({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrunExact', result: 5n }))).toBe(5n)
    const error = BACKRUN_EXECUTOR_ABI.find((x) => x.type === 'error' && x.name === 'ProfitMismatch')!
    expect('inputs' in error && error.inputs.map((i) => `${i.type} ${i.name}`)).toEqual(['int256 profit', 'uint256 expectedProfit'])
  })

  it('encodeBackrunExactCall round-trips field by field; only the selector and the profit word differ from backrun\'s calldata', () => {
    for (const p of [twoHops(), triangle(), { ...twoHops(), refundRecipient: USER }]) {
      const data = encodeBackrunExactCall(exact(p, 4242n))
      const { functionName, args } = decode(data)
      expect(functionName).toBe('backrunExact')
      const plain = decode(encodeBackrunCall(p)).args!
      expect(args).toEqual([...plain.slice(0, 3), 4242n, ...plain.slice(4)])
      const same = encodeBackrunCall({ ...p, minProfit: 4242n })
      expect(data.slice(10)).toBe(same.slice(10))
    }
    // a minProfit carried along in a spread is ignored
    const carried = { ...twoHops(), expectedProfit: 9n }
    expect(encodeBackrunExactCall(carried)).toBe(encodeBackrunExactCall(exact(twoHops(), 9n)))
    expect(decode(encodeBackrunExactCall(carried)).args![3]).toBe(9n)
  })

  it('encodeBackrunExactCall checks the cycle as encodeBackrunCall does, and expectedProfit as a uint256', () => {
    const reject = (p: BackrunExactCallParams) => {
      try {
        encodeBackrunExactCall(p)
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidBackrunError)
        return err as InvalidBackrunError
      }
      throw new Error('expected InvalidBackrunError')
    }
    const p = exact(twoHops(), 1n)
    expect(reject({ ...p, expectedProfit: -1n }).message).toMatch(/expectedProfit -1 is not a uint256/)
    expect(reject({ ...p, expectedProfit: -1n }).details).toEqual({ expectedProfit: -1n })
    expect(reject({ ...p, expectedProfit: 1n << 256n }).message).toMatch(/expectedProfit .* is not a uint256/)
    expect(reject({ ...p, expectedProfit: 3 as unknown as bigint }).message).toMatch(/expectedProfit 3 is not a uint256/)
    expect(decode(encodeBackrunExactCall({ ...p, expectedProfit: (1n << 256n) - 1n })).args![3]).toBe((1n << 256n) - 1n)
    expect(decode(encodeBackrunExactCall({ ...p, expectedProfit: 0n })).args![3]).toBe(0n)
    expect(reject({ ...p, amountIn: 0n }).message).toMatch(/amountIn 0 is not in/)
    expect(reject({ ...p, refundBps: 10_001 }).message).toMatch(/refundBps 10001/)
    expect(reject({ ...p, hops: [p.hops[0]!] }).message).toMatch(/2 or 3 hops, not 1/)
    expect(reject({ ...p, startToken: C }).message).toMatch(/hop 0 starts in/)
    expect(reject({ ...p, refundRecipient: '0x1234' }).message).toMatch(/refundRecipient 0x1234 is not an address/)
  })

  it('toExactBackrunCall turns backrun calldata into the backrunExact calldata of the same cycle with the expected profit', () => {
    for (const p of [twoHops(), triangle(), { ...twoHops(), refundRecipient: USER }, { ...triangle(), minProfit: (1n << 256n) - 1n, refundBps: 10_000 }]) {
      for (const expectedProfit of [0n, 1n, 12_345n, (1n << 256n) - 1n]) {
        const converted = toExactBackrunCall(encodeBackrunCall(p), expectedProfit)
        expect(converted).toBe(encodeBackrunExactCall(exact(p, expectedProfit)))
        const { functionName, args } = decode(converted)
        expect(functionName).toBe('backrunExact')
        expect(args![3]).toBe(expectedProfit)
      }
    }
    // upper- or mixed-case hex decodes the same; a backrunExact call gets its expectedProfit replaced
    const data = encodeBackrunCall(twoHops())
    expect(toExactBackrunCall(`0x${data.slice(2).toUpperCase()}`, 5n)).toBe(encodeBackrunExactCall(exact(twoHops(), 5n)))
    expect(toExactBackrunCall(encodeBackrunExactCall(exact(twoHops(), 1n)), 2n)).toBe(encodeBackrunExactCall(exact(twoHops(), 2n)))
  })

  it('toExactBackrunCall refuses calldata that is not a backrun call, and an expectedProfit that is not a uint256', () => {
    const data = encodeBackrunCall(twoHops())
    expect(() => toExactBackrunCall(data, -1n)).toThrow(/expectedProfit -1 is not a uint256/)
    expect(() => toExactBackrunCall(data, 1n << 256n)).toThrow(InvalidBackrunError)
    const beneficiary = encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'beneficiary' })
    expect(() => toExactBackrunCall(beneficiary, 1n)).toThrow(/calls beneficiary, not backrun/)
    expect(() => toExactBackrunCall('0x12345678', 1n)).toThrow(/not a BackrunExecutor call/)
    expect(() => toExactBackrunCall('0x', 1n)).toThrow(InvalidBackrunError)
    // truncated: the selector is right, the arguments are cut short
    expect(() => toExactBackrunCall(data.slice(0, 10 + 64 * 3) as Hex, 1n)).toThrow(InvalidBackrunError)
  })
})

describe('backrun decoders', () => {
  it('splitBackrunProfit rounds the refund down, as the contract does', () => {
    expect(splitBackrunProfit(10_001n, 2500)).toEqual({ refund: 2500n, beneficiary: 7501n })
    expect(splitBackrunProfit(3n, 3333)).toEqual({ refund: 0n, beneficiary: 3n })
    expect(splitBackrunProfit(7n, 10_000)).toEqual({ refund: 7n, beneficiary: 0n })
    expect(splitBackrunProfit(7n, 0)).toEqual({ refund: 0n, beneficiary: 7n })
  })

  it('decodeBackrunResult reads the grossProfit return value', () => {
    const data = encodeFunctionResult({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrun', result: 987_654_321n })
    expect(decodeBackrunResult(data)).toBe(987_654_321n)
  })

  it('decodeBackrunEvents keeps Backrun events of the executor and skips other logs', () => {
    const topics = encodeEventTopics({ abi: BACKRUN_EXECUTOR_ABI, eventName: 'Backrun', args: { startToken: A } }) as Hex[]
    expect(topics[0]).toBe(BACKRUN_EVENT_TOPIC)
    const data = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [1000n, 250n])
    const transfer = { address: A, topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef' as Hex], data: '0x' as Hex }
    const logs = [transfer, { address: EXECUTOR, topics, data }, { address: POOL_1, topics, data }]
    expect(decodeBackrunEvents(logs, EXECUTOR)).toEqual([{ executor: EXECUTOR, startToken: A, grossProfit: 1000n, refund: 250n }])
    expect(decodeBackrunEvents(logs)).toHaveLength(2)
    expect(decodeBackrunEvents([transfer])).toEqual([])
  })

  it('decodeBackrunRevert names the contract\'s errors (signed profit included) and Error(string), and leaves unknown reverts alone', () => {
    const loss = encodeErrorResult({ abi: BACKRUN_EXECUTOR_ABI, errorName: 'InsufficientProfit', args: [-42n, 100n] })
    expect(decodeBackrunRevert(loss)).toEqual({ errorName: 'InsufficientProfit', args: [-42n, 100n] })
    // backrunExact's: above and below the expected profit, and a loss
    for (const profit of [101n, 99n, -7n]) {
      const mismatch = encodeErrorResult({ abi: BACKRUN_EXECUTOR_ABI, errorName: 'ProfitMismatch', args: [profit, 100n] })
      expect(mismatch.slice(0, 10)).toBe(toFunctionSelector('ProfitMismatch(int256,uint256)'))
      expect(decodeBackrunRevert(mismatch)).toEqual({ errorName: 'ProfitMismatch', args: [profit, 100n] })
    }
    expect(decodeBackrunRevert(encodeErrorResult({ abi: BACKRUN_EXECUTOR_ABI, errorName: 'UnexpectedCallback' }))).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    // Error(string) bubbled up from a pool or token (here a V3 pool's "LO")
    expect(decodeBackrunRevert('0x08c379a0000000000000000000000000000000000000000000000000000000000000002000000000000000000000000000000000000000000000000000000000000000024c4f000000000000000000000000000000000000000000000000000000000000')).toEqual({ errorName: 'Error', args: ['LO'] })
    // another contract's custom error, and no data at all
    expect(decodeBackrunRevert('0x12345678')).toBeUndefined()
    expect(decodeBackrunRevert('0x')).toBeUndefined()
  })
})
