/**
 * encodeSwapPlanCall: the SwapPlan -> SwapPlanRouter.swap calldata mapping, field by field, and
 * the plan rules it checks before the contract would revert. (Execution on a real chain is in
 * test/contracts/swap-plan-router.anvil.test.ts.)
 */
import { decodeFunctionData, encodeFunctionData, getAddress, hexToBytes, toFunctionSelector, toFunctionSignature, zeroAddress, type AbiFunction, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { InvalidSwapPlanError, ROUTER_PROTOCOL, ROUTER_PROTOCOL_V4_NATIVE, SWAP_PLAN_ROUTER_ABI, addressBelow, encodeSwapPlanCall, encodeSwapPlanCallBytes } from '../../src/quote/router-calldata.ts'
import type { PlanHop, SwapPlan } from '../../src/routing/swap-plan.ts'
import artifact from '../../src/contracts/artifacts/SwapPlanRouter.json' with { type: 'json' }

// addresses in ascending order: A < B < C < D
const A = '0x1000000000000000000000000000000000000001' as const
const B = '0x2000000000000000000000000000000000000002' as const
const C = '0x3000000000000000000000000000000000000003' as const
const D = '0x4000000000000000000000000000000000000004' as const
// checksummed, as decodeFunctionData gives them back
const POOL_1 = getAddress('0xa000000000000000000000000000000000000001')
const POOL_2 = getAddress('0xa000000000000000000000000000000000000002')
const POOL_3 = getAddress('0xa000000000000000000000000000000000000003')

const hop = (protocol: PlanHop['protocol'], pool: Hex, tokenIn: Hex, tokenOut: Hex, fee = 3000): PlanHop => ({
  protocol,
  pool,
  tokenIn,
  tokenOut,
  fee,
  zeroForOne: BigInt(tokenIn) < BigInt(tokenOut),
})

/** A -> D: 600 through V3 A->D, 400 through V2 A->C then V3 C->B (0.05%) then V2 B->D. */
function samplePlan(): SwapPlan {
  return {
    tokenIn: A,
    tokenOut: D,
    amountIn: 1000n,
    expectedAmountOut: 0n,
    legs: [
      { amountIn: 600n, expectedAmountOut: 0n, hops: [hop('uniswap-v3', POOL_1, A, D, 10000)] },
      { amountIn: 400n, expectedAmountOut: 0n, hops: [hop('uniswap-v2', POOL_2, A, C), hop('uniswap-v3', POOL_3, C, B, 500), hop('uniswap-v2', POOL_1, B, D)] },
    ],
  }
}

const decode = (data: Hex) => decodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, data })

describe('encodeSwapPlanCall', () => {
  // (that the committed artifact is what the source compiles to is test/devnet/contract-artifacts.test.ts)
  it('uses the ABI of the committed artifact, with the documented signature', () => {
    expect(SWAP_PLAN_ROUTER_ABI).toEqual(artifact.abi)
    const swap = SWAP_PLAN_ROUTER_ABI.find((x): x is AbiFunction => x.type === 'function' && x.name === 'swap')!
    expect(toFunctionSignature(swap)).toBe(
      'swap((address,address,uint256,(uint256,(uint8,address,address,uint24,int24,address)[])[]),uint256,address,uint256,address,bytes)',
    )
    expect(swap.stateMutability).toBe('payable')
    expect(encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: 1n, deadline: 2n }).slice(0, 10)).toBe(toFunctionSelector(swap))
  })

  it('maps plan, legs and hops field by field; protocol 0 = V2, 1 = V3; no tokenIn or zeroForOne per hop', () => {
    const data = encodeSwapPlanCall({
      plan: samplePlan(),
      minAmountOut: 990n,
      recipient: '0x00000000000000000000000000000000000000bb',
      deadline: 1_767_229_200n,
      postCall: { target: '0x00000000000000000000000000000000000000cc', data: '0xdeadbeef' },
    })
    const { functionName, args } = decode(data)
    expect(functionName).toBe('swap')
    expect(args).toEqual([
      {
        tokenIn: A,
        tokenOut: D,
        amountIn: 1000n,
        legs: [
          { amountIn: 600n, hops: [{ protocol: 1, pool: POOL_1, tokenOut: D, fee: 10000, tickSpacing: 0, hooks: zeroAddress }] },
          {
            amountIn: 400n,
            hops: [
              { protocol: 0, pool: POOL_2, tokenOut: C, fee: 3000, tickSpacing: 0, hooks: zeroAddress },
              { protocol: 1, pool: POOL_3, tokenOut: B, fee: 500, tickSpacing: 0, hooks: zeroAddress },
              { protocol: 0, pool: POOL_1, tokenOut: D, fee: 3000, tickSpacing: 0, hooks: zeroAddress },
            ],
          },
        ],
      },
      990n,
      getAddress('0x00000000000000000000000000000000000000bb'),
      1_767_229_200n,
      '0x00000000000000000000000000000000000000cc',
      '0xdeadbeef',
    ])
    expect(ROUTER_PROTOCOL).toEqual({ 'uniswap-v2': 0, 'uniswap-v3': 1, 'uniswap-v4': 2 })
  })

  it('encodes a V4 hop as protocol 2 naming the PoolManager, with the key\'s fee, tick spacing and hooks (3 for a native ETH key); refuses a V4 hop without them', () => {
    const poolId = `0x${'ab'.repeat(32)}` as Hex
    const v4 = (extra: Partial<PlanHop>): PlanHop => ({ ...hop('uniswap-v4', poolId, A, D, 1200), ...extra })
    const plan = (h: PlanHop): SwapPlan => ({ tokenIn: A, tokenOut: D, amountIn: 5n, expectedAmountOut: 0n, legs: [{ amountIn: 5n, expectedAmountOut: 0n, hops: [h] }] })
    const { args } = decode(encodeSwapPlanCall({ plan: plan(v4({ v4: { poolManager: POOL_3, tickSpacing: 24 } })), minAmountOut: 0n, deadline: 1n }))
    expect((args![0] as { legs: Array<{ hops: unknown[] }> }).legs[0]!.hops).toEqual([{ protocol: 2, pool: POOL_3, tokenOut: D, fee: 1200, tickSpacing: 24, hooks: zeroAddress }])
    const hooks = `0x${'12'.repeat(18)}0040` as Hex
    const hooked = decode(encodeSwapPlanCall({ plan: plan(v4({ fee: 0x800000, v4: { poolManager: POOL_3, tickSpacing: 24, hooks, hookAltersSwap: false } })), minAmountOut: 0n, deadline: 1n }))
    expect((hooked.args![0] as { legs: Array<{ hops: unknown[] }> }).legs[0]!.hops).toEqual([{ protocol: 2, pool: POOL_3, tokenOut: D, fee: 0x800000, tickSpacing: 24, hooks: getAddress(hooks) }])
    const native = decode(encodeSwapPlanCall({ plan: plan(v4({ v4: { poolManager: POOL_3, tickSpacing: 24, nativeEth: true } })), minAmountOut: 0n, deadline: 1n }))
    expect((native.args![0] as { legs: Array<{ hops: unknown[] }> }).legs[0]!.hops).toEqual([{ protocol: 3, pool: POOL_3, tokenOut: D, fee: 1200, tickSpacing: 24, hooks: zeroAddress }])
    expect(() => encodeSwapPlanCall({ plan: plan(v4({})), minAmountOut: 0n, deadline: 1n })).toThrow(InvalidSwapPlanError)
    expect(() => encodeSwapPlanCall({ plan: plan(v4({ v4: { poolManager: POOL_3, tickSpacing: 0 } })), minAmountOut: 0n, deadline: 1n })).toThrow(/tick spacing 0/)
    // a V2 or V3 hop carries no V4 fields
    expect(() => encodeSwapPlanCall({ plan: plan({ ...hop('uniswap-v3', POOL_1, A, D), v4: { poolManager: POOL_3, tickSpacing: 10 } }), minAmountOut: 0n, deadline: 1n })).toThrow(InvalidSwapPlanError)
  })

  it('encodes no recipient as address(0) (the contract pays msg.sender) and no post call as (address(0), empty)', () => {
    const { args } = decode(encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: 0n, deadline: 1n }))
    expect(args!.slice(1)).toEqual([0n, zeroAddress, 1n, zeroAddress, '0x'])
  })

  it('is deterministic and accepts addresses in any case', () => {
    const lower = encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: 5n, deadline: 9n })
    expect(encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: 5n, deadline: 9n })).toBe(lower)
    const mixed = samplePlan()
    mixed.legs[1]!.hops[0]!.tokenIn = A.toUpperCase().replace('0X', '0x') as Hex
    expect(encodeSwapPlanCall({ plan: mixed, minAmountOut: 5n, deadline: 9n })).toBe(lower)
  })

  it('gives the bytes viem\'s general ABI encoder gives, for splits, V4 hops, recipients and post calls of any length', () => {
    const v4Plan: SwapPlan = {
      tokenIn: A,
      tokenOut: D,
      amountIn: 2n ** 255n,
      expectedAmountOut: 0n,
      legs: [
        { amountIn: 2n ** 254n, expectedAmountOut: 0n, hops: [{ ...hop('uniswap-v4', POOL_1, A, C, 0), v4: { poolManager: POOL_3, tickSpacing: 32_767 } }, hop('uniswap-v3', POOL_2, C, D, 2 ** 24 - 1)] },
        // a hooked dynamic-fee hop, then a native-ETH one (protocol 3)
        { amountIn: 2n ** 253n, expectedAmountOut: 0n, hops: [{ ...hop('uniswap-v4', POOL_1, A, C, 0x800000), v4: { poolManager: POOL_3, tickSpacing: 1, hooks: POOL_2 } }, { ...hop('uniswap-v4', POOL_2, C, D, 3000), v4: { poolManager: POOL_3, tickSpacing: 60, nativeEth: true } }] },
        { amountIn: 2n ** 253n, expectedAmountOut: 0n, hops: [hop('uniswap-v2', POOL_3, A, D)] },
      ],
    }
    const calls: Array<Parameters<typeof encodeSwapPlanCall>[0]> = [
      { plan: samplePlan(), minAmountOut: 0n, deadline: 1n },
      { plan: v4Plan, minAmountOut: 2n ** 256n - 1n, deadline: 2n ** 64n, recipient: POOL_2 },
      ...[0, 1, 3, 31, 32, 33, 100].map((n) => ({ plan: samplePlan(), minAmountOut: 7n, deadline: 9n, postCall: { target: C, data: `0x${'Ab'.repeat(n)}` as Hex } })),
    ]
    for (const call of calls) {
      const expected = encodeFunctionData({
        abi: SWAP_PLAN_ROUTER_ABI,
        functionName: 'swap',
        args: [
          {
            tokenIn: call.plan.tokenIn,
            tokenOut: call.plan.tokenOut,
            amountIn: call.plan.amountIn,
            legs: call.plan.legs.map((l) => ({
              amountIn: l.amountIn,
              hops: l.hops.map((h) => ({
                protocol: h.v4?.nativeEth === true ? ROUTER_PROTOCOL_V4_NATIVE : ROUTER_PROTOCOL[h.protocol],
                pool: h.v4?.poolManager ?? h.pool,
                tokenOut: h.tokenOut,
                fee: h.fee,
                tickSpacing: h.v4?.tickSpacing ?? 0,
                hooks: h.v4?.hooks ?? zeroAddress,
              })),
            })),
          },
          call.minAmountOut,
          call.recipient ?? zeroAddress,
          call.deadline,
          call.postCall?.target ?? zeroAddress,
          call.postCall?.data ?? '0x',
        ],
      })
      expect(encodeSwapPlanCall(call)).toBe(expected.toLowerCase())
      expect(encodeSwapPlanCallBytes(call)).toEqual(hexToBytes(expected))
    }
    expect(() => encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: 0n, deadline: 1n, recipient: '0x1234' })).toThrow(/recipient 0x1234 is not an address/)
    expect(() => encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: 0n, deadline: 1n, postCall: { target: C, data: '0xabc' } })).toThrow(/not hex bytes/)
  })

  it('writes the bytes viem writes for 500 random plans: amounts of every size (around 2^53, 2^64, 2^128, up to 2^256 - 1), addresses in any case, post calls', () => {
    // a fixed-seed generator: the same plans every run
    let seed = 0x2545f491
    const next = () => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return seed >>> 0
    }
    const pick = <T,>(xs: readonly T[]): T => xs[next() % xs.length]!
    const bits = [1, 8, 31, 32, 52, 53, 54, 63, 64, 65, 96, 127, 128, 129, 200, 255, 256]
    const amount = (): bigint => {
      const b = pick(bits)
      let v = 0n
      for (let i = 0; i < b; i += 32) v = (v << 32n) | BigInt(next())
      v &= (1n << BigInt(b)) - 1n
      return v === 0n ? 1n : v
    }
    const address = (): Hex => {
      let hex = ''
      for (let i = 0; i < 5; i++) hex += next().toString(16).padStart(8, '0')
      const cased = [...hex].map((c) => (next() % 2 === 0 ? c.toUpperCase() : c)).join('')
      return `0x${cased}`
    }
    for (let n = 0; n < 500; n++) {
      const tokenIn = address()
      const tokenOut = address()
      const legs = Array.from({ length: 1 + (next() % 4) }, () => {
        const mids = Array.from({ length: next() % 3 }, address)
        const tokens = [tokenIn, ...mids, tokenOut]
        const hops = tokens.slice(1).map((out, i): PlanHop => {
          const protocol = pick(['uniswap-v2', 'uniswap-v3', 'uniswap-v4'] as const)
          const h = hop(protocol, address(), tokens[i]!, out, next() % 2 ** 24)
          return protocol === 'uniswap-v4' ? { ...h, v4: { poolManager: address(), tickSpacing: 1 + (next() % 32_767), hooks: next() % 2 === 0 ? address() : undefined, nativeEth: next() % 3 === 0 } } : h
        })
        return { amountIn: amount() >> 3n || 1n, expectedAmountOut: 0n, hops }
      })
      const plan: SwapPlan = { tokenIn, tokenOut, amountIn: legs.reduce((a, l) => a + l.amountIn, 0n), expectedAmountOut: 0n, legs }
      const postBytes = next() % 5 === 0 ? next() % 70 : 0
      const call = {
        plan,
        minAmountOut: amount(),
        deadline: amount(),
        recipient: next() % 2 === 0 ? address() : undefined,
        postCall: postBytes > 0 ? { target: address(), data: `0x${Array.from({ length: postBytes }, () => (next() % 256).toString(16).padStart(2, '0')).join('')}` as Hex } : undefined,
      }
      // viem refuses a mixed-case address whose checksum is wrong: it is given them in lowercase
      const lc = (a: string | undefined) => a?.toLowerCase() as Hex | undefined
      const expected = encodeFunctionData({
        abi: SWAP_PLAN_ROUTER_ABI,
        functionName: 'swap',
        args: [
          {
            tokenIn: lc(plan.tokenIn)!,
            tokenOut: lc(plan.tokenOut)!,
            amountIn: plan.amountIn,
            legs: plan.legs.map((l) => ({
              amountIn: l.amountIn,
              hops: l.hops.map((h) => ({
                protocol: h.v4?.nativeEth === true ? ROUTER_PROTOCOL_V4_NATIVE : ROUTER_PROTOCOL[h.protocol],
                pool: lc(h.v4?.poolManager ?? h.pool)!,
                tokenOut: lc(h.tokenOut)!,
                fee: h.fee,
                tickSpacing: h.v4?.tickSpacing ?? 0,
                hooks: lc(h.v4?.hooks) ?? zeroAddress,
              })),
            })),
          },
          call.minAmountOut,
          lc(call.recipient) ?? zeroAddress,
          call.deadline,
          lc(call.postCall?.target) ?? zeroAddress,
          call.postCall?.data ?? '0x',
        ],
      })
      // compared as hex: toEqual walks a typed array element by element
      expect(Buffer.from(encodeSwapPlanCallBytes(call)).toString('hex')).toBe(expected.slice(2).toLowerCase())
      expect(encodeSwapPlanCall(call)).toBe(expected.toLowerCase())
    }
  })

  it('orders addresses as numbers in any case (the zeroForOne check), and refuses an address with a character that is not a hex digit', () => {
    const pairs: Array<[string, string]> = [
      [A, B],
      [B, A],
      [A, A],
      ['0x00000000000000000000000000000000000000a0', '0x00000000000000000000000000000000000000A1'],
      ['0x9fffffffffffffffffffffffffffffffffffffff', '0xa000000000000000000000000000000000000000'],
      ['0xA000000000000000000000000000000000000000', '0x9fffffffffffffffffffffffffffffffffffffff'],
      ['0xabcdef0000000000000000000000000000000000', '0xABCDEF0000000000000000000000000000000001'],
      ['0x12', '0x0000000000000000000000000000000000000013'],
    ]
    for (const [a, b] of pairs) expect(addressBelow(a, b)).toBe(BigInt(a) < BigInt(b))
    for (const bad of ['0x100000000000000000000000000000000000000g', '0x10000000000000000000000000000000000000 1', '0x1000000000000000000000000000000000000é1', `0X${A.slice(2)}`]) {
      const p = samplePlan()
      p.legs[0]!.hops[0]!.pool = bad as Hex
      expect(() => encodeSwapPlanCallBytes({ plan: p, minAmountOut: 0n, deadline: 1n })).toThrow(new RegExp(`hop.pool ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not an address`))
    }
  })

  describe('refuses plans the router would revert on', () => {
    const expectInvalid = (mutate: (p: SwapPlan) => void, message: RegExp) => {
      const p = samplePlan()
      mutate(p)
      expect(() => encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: 1n })).toThrow(InvalidSwapPlanError)
      expect(() => encodeSwapPlanCall({ plan: p, minAmountOut: 0n, deadline: 1n })).toThrow(message)
    }

    it('legs that do not add up to amountIn (AmountInMismatch)', () => expectInvalid((p) => (p.amountIn = 1001n), /add up to 1000, not the plan's 1001/))
    it('no legs (EmptyPlan)', () => expectInvalid((p) => (p.legs = []), /no legs/))
    it('a leg of amountIn 0', () =>
      expectInvalid((p) => {
        p.legs[0]!.amountIn = 0n
        p.amountIn = 400n
      }, /leg 0 has amountIn 0/))
    it('a leg of 0 or 4 hops (InvalidHopCount)', () => {
      expectInvalid((p) => (p.legs[0]!.hops = []), /leg 0 has 0 hops/)
      expectInvalid((p) => p.legs[1]!.hops.push(hop('uniswap-v2', POOL_1, D, A)), /leg 1 has 4 hops; the router takes 1 to 3/)
    })
    it('a broken path: a hop not starting where the last one ended', () => expectInvalid((p) => (p.legs[1]!.hops[1]!.tokenIn = B), /hop 1 starts in/))
    it('a leg ending elsewhere than tokenOut (PathMismatch)', () => expectInvalid((p) => (p.tokenOut = C), /ends in/))
    it('a hop from a token to itself', () => expectInvalid((p) => (p.legs[0]!.hops[0]!.tokenOut = A), /swaps .* for itself/))
    it('zeroForOne disagreeing with the token order (the contract derives it)', () =>
      expectInvalid((p) => (p.legs[1]!.hops[1]!.zeroForOne = true), /zeroForOne true disagrees/))
    it('a fee that is not a uint24', () => expectInvalid((p) => (p.legs[0]!.hops[0]!.fee = 1 << 24), /not a uint24/))
    it('an unknown protocol', () =>
      expectInvalid((p) => ((p.legs[0]!.hops[0]! as { protocol: string }).protocol = 'curve'), /unknown protocol curve/))
    it('negative amounts', () => {
      expect(() => encodeSwapPlanCall({ plan: samplePlan(), minAmountOut: -1n, deadline: 1n })).toThrow(/minAmountOut -1 is not a uint256/)
      expectInvalid((p) => {
        p.legs[0]!.amountIn = -600n
        p.amountIn = -200n
      }, /is not a uint256/)
    })
  })
})
