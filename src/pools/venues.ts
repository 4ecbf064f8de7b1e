/**
 * Venues as data: which deployments of V2-style pairs and V3-style pools a chain is routed over
 * (VENUES in fork mode, the registry's `venues` on the devnet), the checks a list must pass before
 * the service trusts it, the mainnet defaults of the main forks, and where a venue's pools live
 * (their CREATE2 address, which is also how SwapPlanRouter and BackrunExecutor prove a pool genuine).
 */
import { encodeAbiParameters, encodePacked, getContractAddress, keccak256 } from 'viem'
import type { Address, Hex } from '../chain/types.ts'
import { V4_DYNAMIC_FEE_FLAG } from '../dex/math/index.ts'
import { BaseError } from '../primitives/base-error.ts'
import type { V2FlashCallback, V2Venue, V3SwapCallback, V3Venue, V4Venue, Venue } from './pools.ts'
import { v4HookAddressProblem } from './uniswap-v4-hooks.ts'
import type { V4PoolKey } from './uniswap-v4-slots.ts'

/**
 * The contracts hold each kind's venues in fixed immutable slots (UniswapPoolAccess.sol): at most
 * this many V2 and this many V3 venues per deployment.
 */
export const MAX_VENUES_PER_KIND = 4
/** fee tiers one V3 venue may list (discovery asks getPool once per tier and token pair) */
export const MAX_FEE_TIERS_PER_VENUE = 8
/** V4 venues: SwapPlanRouter holds one PoolManager (an immutable) */
export const MAX_V4_VENUES = 1
/** pool keys one V4 venue may list (discovery reads the slot0 of each key of a pair) */
export const MAX_V4_POOLS_PER_VENUE = 256
/** v4-core TickMath.MAX_TICK_SPACING */
const V4_MAX_TICK_SPACING = 32_767

export const V2_FLASH_CALLBACKS: readonly V2FlashCallback[] = ['uniswapV2Call', 'pancakeCall']
export const V3_SWAP_CALLBACKS: readonly V3SwapCallback[] = ['uniswapV3SwapCallback', 'pancakeV3SwapCallback']

/** Uniswap's own init-code hashes (UniswapV2Library.pairFor, the V3 periphery's PoolAddress). */
export const UNISWAP_V2_PAIR_INIT_CODE_HASH: Hex = '0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f'
export const UNISWAP_V3_POOL_INIT_CODE_HASH: Hex = '0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54'
/** The fee tiers the Uniswap V3 factory enables (0.01%, 0.05%, 0.3%, 1%) and their tick spacings. */
export const UNISWAP_V3_FEE_TIERS: readonly number[] = [100, 500, 3000, 10000]
export const UNISWAP_V3_TICK_SPACINGS: readonly number[] = [1, 10, 60, 200]

/** V2_FACTORY's venue: Uniswap V2's pair code and fee at that factory. */
export function uniswapV2Venue(factory: Address, name = 'uniswap-v2'): V2Venue {
  return { protocol: 'uniswap-v2', name, factory, initCodeHash: UNISWAP_V2_PAIR_INIT_CODE_HASH, feeBps: 30, callback: 'uniswapV2Call' }
}

/** V3_FACTORY's venue: Uniswap V3's pool code, fee tiers and callback at that factory. */
export function uniswapV3Venue(factory: Address, name = 'uniswap-v3'): V3Venue {
  return {
    protocol: 'uniswap-v3',
    name,
    factory,
    poolDeployer: factory,
    initCodeHash: UNISWAP_V3_POOL_INIT_CODE_HASH,
    feeTiers: UNISWAP_V3_FEE_TIERS,
    tickSpacings: UNISWAP_V3_TICK_SPACINGS,
    callback: 'uniswapV3SwapCallback',
  }
}

/**
 * Ethereum mainnet's main V2 and V3 forks (VENUES=mainnet). Sources are cited in README
 * ("Venues"); test/pools/venues.test.ts derives well-known pools from them.
 */
export const MAINNET_VENUES: readonly Venue[] = Object.freeze([
  uniswapV2Venue('0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f'),
  {
    protocol: 'uniswap-v2',
    name: 'sushiswap-v2',
    factory: '0xc0aee478e3658e2610c5f7a4a2e1777ce9e4f2ac',
    initCodeHash: '0xe18a34eb0e04b04f7a0ac29a6e80748dca96319b42c54d679cb821dca90c6303',
    feeBps: 30,
    callback: 'uniswapV2Call',
  },
  {
    protocol: 'uniswap-v2',
    name: 'pancakeswap-v2',
    factory: '0x1097053fd2ea711dad45caccc45eff7548fcb362',
    initCodeHash: '0x57224589c67f3f30a6b0d7a1b54cf3153ab84563bc609ef41dfb34f8b2974d2d',
    feeBps: 25,
    callback: 'pancakeCall',
  },
  uniswapV3Venue('0x1f98431c8ad98523631ae4a59f267346ea31f984'),
  { ...uniswapV3Venue('0xbaceb8ec6b9355dfc0269c18bac9d6e2bdc29c4f', 'sushiswap-v3') },
  {
    protocol: 'uniswap-v3',
    name: 'pancakeswap-v3',
    factory: '0x0bfbcf9fa4f9c56b0f40a671ad40e0805a091865',
    poolDeployer: '0x41ff9aa7e16b8b1a8a8dc4f0efacd93d02d071c9',
    initCodeHash: '0x6ce8eb472fa82df5469c6ab6d485f17c3ad13c8cd7af59b3d4a8026c5ce0f7e2',
    feeTiers: [100, 500, 2500, 10000],
    tickSpacings: [1, 10, 50, 200],
    callback: 'pancakeV3SwapCallback',
  },
] satisfies Venue[])

/** pool addresses venuePoolAddress keeps; past it the memo starts over */
export const MAX_MEMOIZED_POOL_ADDRESSES = 8_192

/**
 * A bounded memo of venue pool addresses: (deployer, init code hash, tokens, fee) -> CREATE2
 * address. Discovery asks for every venue, fee tier and token pair of a request's routing tokens at
 * each block it does not carry over (every block in fork mode): ~150 addresses for the bench:quote
 * mix's pairs, each a keccak over viem's hex encodings (0.1-0.3 ms each), for addresses that never
 * change. At `max` entries it is cleared and starts over.
 */
export class PoolAddressMemo {
  private readonly addresses = new Map<string, Address>()

  constructor(private readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`PoolAddressMemo: max must be a positive integer, got ${max}`)
  }

  get size(): number {
    return this.addresses.size
  }

  address(venue: V2Venue | V3Venue, token0: Address, token1: Address, fee?: number): Address {
    const deployer = venue.protocol === 'uniswap-v2' ? venue.factory : venue.poolDeployer
    const key = `${deployer}:${venue.initCodeHash}:${token0}:${token1}:${venue.protocol === 'uniswap-v2' ? '' : String(fee)}`
    let address = this.addresses.get(key)
    if (address === undefined) {
      address = computePoolAddress(venue, token0, token1, fee)
      if (this.addresses.size >= this.max) this.addresses.clear()
      this.addresses.set(key, address)
    }
    return address
  }
}

const poolAddresses = new PoolAddressMemo(MAX_MEMOIZED_POOL_ADDRESSES)

/** Where the venue's pool of (token0, token1[, fee]) is, deployed or not; token0 < token1. */
export function venuePoolAddress(venue: V2Venue | V3Venue, token0: Address, token1: Address, fee?: number): Address {
  return poolAddresses.address(venue, token0, token1, fee)
}

function computePoolAddress(venue: V2Venue | V3Venue, token0: Address, token1: Address, fee?: number): Address {
  if (venue.protocol === 'uniswap-v2') {
    const salt = keccak256(encodePacked(['address', 'address'], [token0, token1]))
    return getContractAddress({ opcode: 'CREATE2', from: venue.factory, salt, bytecodeHash: venue.initCodeHash }).toLowerCase() as Address
  }
  if (fee === undefined) throw new TypeError(`a V3 pool address needs its fee (venue ${venue.name})`)
  const salt = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }], [token0, token1, fee]))
  return getContractAddress({ opcode: 'CREATE2', from: venue.poolDeployer, salt, bytecodeHash: venue.initCodeHash }).toLowerCase() as Address
}

/** The checks of a venue list; every problem is named (VENUES[i].field: what is wrong). */
export class VenueListError extends BaseError<{ problems: string[] }> {
  override readonly name = 'VenueListError'
  constructor(readonly problems: string[]) {
    super(`invalid venues: ${problems.join('; ')}`, { details: { problems } })
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'
const HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * The venues of a VENUES value: `mainnet` (MAINNET_VENUES), or a JSON array of
 * `{"kind":"v2","name","factory","initCodeHash","feeBps","callback"?}`,
 * `{"kind":"v3","name","factory","poolDeployer"?,"initCodeHash","feeTiers","tickSpacings","callback"?}`
 * (callbacks default to Uniswap's, poolDeployer to the factory) and at most one
 * `{"kind":"v4","name","poolManager","poolKeys":[{"currency0","currency1","fee","tickSpacing","hooks"?}]}`
 * (V4 pools have no factory: the venue lists the keys routes may use). Throws VenueListError.
 */
export function parseVenues(text: string): Venue[] {
  if (text.trim() === 'mainnet') return MAINNET_VENUES.map((v) => ({ ...v }))
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    throw new VenueListError(['expected "mainnet" or a JSON array of venues'])
  }
  if (!Array.isArray(raw)) throw new VenueListError(['expected a JSON array of venues'])
  const problems: string[] = []
  const venues: Venue[] = []
  raw.forEach((entry: unknown, i) => {
    const venue = parseVenue(entry, `[${i}]`, problems)
    if (venue !== undefined) venues.push(venue)
  })
  // the list as a whole is judged once its entries are well-formed
  if (problems.length === 0) problems.push(...venueListProblems(venues))
  if (problems.length > 0) throw new VenueListError(problems)
  return venues
}

/** what is wrong with a list of well-formed venues as a whole: names, factories, counts per kind */
/** The contract a venue is known by: a V2/V3 venue's factory, a V4 venue's PoolManager. */
export function venueContract(venue: Venue): Address {
  return venue.protocol === 'uniswap-v4' ? venue.poolManager : venue.factory
}

export function venueListProblems(venues: readonly Venue[]): string[] {
  const problems: string[] = []
  if (venues.length === 0) problems.push('at least one venue is needed')
  const names = new Set<string>()
  const factories = new Set<string>()
  for (const v of venues) {
    if (names.has(v.name)) problems.push(`venue name ${v.name} is used twice`)
    names.add(v.name)
    const factory = venueContract(v)
    const key = `${v.protocol} ${factory.toLowerCase()}`
    if (factories.has(key)) problems.push(`${v.protocol === 'uniswap-v4' ? 'poolManager' : 'factory'} ${factory} is listed twice`)
    factories.add(key)
  }
  for (const protocol of ['uniswap-v2', 'uniswap-v3'] as const) {
    const n = venues.filter((v) => v.protocol === protocol).length
    if (n > MAX_VENUES_PER_KIND) problems.push(`${n} ${protocol === 'uniswap-v2' ? 'v2' : 'v3'} venues: the contracts hold at most ${MAX_VENUES_PER_KIND} per kind`)
  }
  const v4 = venues.filter((v) => v.protocol === 'uniswap-v4').length
  if (v4 > MAX_V4_VENUES) problems.push(`${v4} v4 venues: SwapPlanRouter holds one PoolManager`)
  return problems
}

function parseVenue(entry: unknown, at: string, problems: string[]): Venue | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    problems.push(`${at}: expected an object`)
    return undefined
  }
  const e = entry as Record<string, unknown>
  const before = problems.length
  const name = typeof e.name === 'string' && /^[a-z0-9][a-z0-9._-]{0,39}$/.test(e.name) ? e.name : undefined
  if (name === undefined) problems.push(`${at}.name: expected 1-40 characters of a-z 0-9 . _ -`)
  const address = (field: string): Address | undefined => {
    const v = e[field]
    if (typeof v === 'string' && ADDRESS.test(v)) return v.toLowerCase() as Address
    problems.push(`${at}.${field}: expected a 0x-prefixed 20-byte address`)
    return undefined
  }
  if (e.kind === 'v4') return parseV4Venue(e, at, name, problems, before)
  const factory = address('factory')
  const initCodeHash = typeof e.initCodeHash === 'string' && HASH.test(e.initCodeHash) ? (e.initCodeHash.toLowerCase() as Hex) : undefined
  if (initCodeHash === undefined) problems.push(`${at}.initCodeHash: expected a 0x-prefixed 32-byte hash`)

  if (e.kind === 'v2') {
    const feeBps = Number.isInteger(e.feeBps) && (e.feeBps as number) >= 0 && (e.feeBps as number) < 10_000 ? (e.feeBps as number) : undefined
    if (feeBps === undefined) problems.push(`${at}.feeBps: expected an integer 0..9999 (basis points)`)
    const callback = oneOf(e.callback ?? 'uniswapV2Call', V2_FLASH_CALLBACKS, `${at}.callback`, problems)
    if (problems.length > before) return undefined
    return { protocol: 'uniswap-v2', name: name!, factory: factory!, initCodeHash: initCodeHash!, feeBps: feeBps!, callback: callback! }
  }
  if (e.kind === 'v3') {
    const poolDeployer = e.poolDeployer === undefined ? factory : address('poolDeployer')
    const feeTiers = intList(e.feeTiers, 1, 999_999, `${at}.feeTiers`, problems)
    const tickSpacings = intList(e.tickSpacings, 1, 16_383, `${at}.tickSpacings`, problems)
    if (feeTiers !== undefined && tickSpacings !== undefined && feeTiers.length !== tickSpacings.length) {
      problems.push(`${at}.tickSpacings: one per fee tier (${feeTiers.length})`)
    }
    if (feeTiers !== undefined && new Set(feeTiers).size !== feeTiers.length) problems.push(`${at}.feeTiers: a tier is listed twice`)
    const callback = oneOf(e.callback ?? 'uniswapV3SwapCallback', V3_SWAP_CALLBACKS, `${at}.callback`, problems)
    if (problems.length > before) return undefined
    return { protocol: 'uniswap-v3', name: name!, factory: factory!, poolDeployer: poolDeployer!, initCodeHash: initCodeHash!, feeTiers: feeTiers!, tickSpacings: tickSpacings!, callback: callback! }
  }
  problems.push(`${at}.kind: expected "v2", "v3" or "v4"`)
  return undefined
}

/**
 * `{"kind":"v4","name","poolManager","poolKeys":[{"currency0","currency1","fee","tickSpacing","hooks"?}]}`.
 * A key is what the PoolManager would accept: currency0 < currency1 (currency0 may be address(0),
 * native ETH, routed as WETH), a static LP fee below 100% or the dynamic-fee flag 0x800000, and a
 * hooks address whose permission bits v4-core's Hooks.isValidHookAddress accepts with that fee
 * (a dynamic fee needs a hook). Which hooked pools are modelled and which only executed:
 * uniswap-v4-hooks.ts.
 */
function parseV4Venue(e: Record<string, unknown>, at: string, name: string | undefined, problems: string[], before: number): V4Venue | undefined {
  const poolManager = typeof e.poolManager === 'string' && ADDRESS.test(e.poolManager) ? (e.poolManager.toLowerCase() as Address) : undefined
  if (poolManager === undefined) problems.push(`${at}.poolManager: expected a 0x-prefixed 20-byte address`)
  const pools: V4PoolKey[] = []
  if (!Array.isArray(e.poolKeys) || e.poolKeys.length === 0 || e.poolKeys.length > MAX_V4_POOLS_PER_VENUE) {
    problems.push(`${at}.poolKeys: expected 1 to ${MAX_V4_POOLS_PER_VENUE} pool keys`)
  } else {
    e.poolKeys.forEach((raw: unknown, i) => {
      const key = parseV4PoolKey(raw, `${at}.poolKeys[${i}]`, problems)
      if (key !== undefined) pools.push(key)
    })
  }
  if (problems.length > before) return undefined
  return { protocol: 'uniswap-v4', name: name!, poolManager: poolManager!, pools }
}

function parseV4PoolKey(raw: unknown, at: string, problems: string[]): V4PoolKey | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(`${at}: expected an object`)
    return undefined
  }
  const k = raw as Record<string, unknown>
  const before = problems.length
  const address = (field: string, value: unknown): Address | undefined => {
    if (typeof value === 'string' && ADDRESS.test(value)) return value.toLowerCase() as Address
    problems.push(`${at}.${field}: expected a 0x-prefixed 20-byte address`)
    return undefined
  }
  const currency0 = address('currency0', k.currency0)
  const currency1 = address('currency1', k.currency1)
  const hooks = address('hooks', k.hooks ?? ZERO_ADDRESS)
  if (currency0 !== undefined && currency1 !== undefined && BigInt(currency0) >= BigInt(currency1)) problems.push(`${at}: currency0 must be below currency1`)
  if (currency1 === ZERO_ADDRESS) problems.push(`${at}.currency1: native ETH (address(0)) can only be currency0`)
  const fee = k.fee
  const dynamicFee = fee === V4_DYNAMIC_FEE_FLAG
  if (!dynamicFee && (!Number.isInteger(fee) || (fee as number) < 0 || (fee as number) >= 1_000_000)) {
    problems.push(`${at}.fee: expected a static LP fee in pips (an integer 0..999999) or ${V4_DYNAMIC_FEE_FLAG} (0x800000, a dynamic fee)`)
  }
  const hookProblem = hooks === undefined ? undefined : v4HookAddressProblem(hooks, dynamicFee)
  if (hookProblem !== undefined) problems.push(`${at}.hooks: ${hookProblem}`)
  const tickSpacing = k.tickSpacing
  if (!Number.isInteger(tickSpacing) || (tickSpacing as number) < 1 || (tickSpacing as number) > V4_MAX_TICK_SPACING) problems.push(`${at}.tickSpacing: expected an integer 1..${V4_MAX_TICK_SPACING}`)
  if (problems.length > before) return undefined
  return { currency0: currency0!, currency1: currency1!, fee: fee as number, tickSpacing: tickSpacing as number, hooks: hooks! }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], at: string, problems: string[]): T | undefined {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T
  problems.push(`${at}: expected one of ${allowed.join(', ')} (the callbacks our contracts implement)`)
  return undefined
}

function intList(value: unknown, min: number, max: number, at: string, problems: string[]): number[] | undefined {
  if (Array.isArray(value) && value.length >= 1 && value.length <= MAX_FEE_TIERS_PER_VENUE && value.every((x) => Number.isInteger(x) && x >= min && x <= max)) return value as number[]
  problems.push(`${at}: expected 1 to ${MAX_FEE_TIERS_PER_VENUE} integers ${min}..${max}`)
  return undefined
}

/** A venue in the VENUES JSON format (the devnet registry's `venues` uses it too). */
export function venueJson(venue: Venue): Record<string, unknown> {
  if (venue.protocol === 'uniswap-v2') {
    return { kind: 'v2', name: venue.name, factory: venue.factory, initCodeHash: venue.initCodeHash, feeBps: venue.feeBps, callback: venue.callback }
  }
  if (venue.protocol === 'uniswap-v4') return { kind: 'v4', name: venue.name, poolManager: venue.poolManager, poolKeys: venue.pools.map((k) => ({ ...k })) }
  return {
    kind: 'v3',
    name: venue.name,
    factory: venue.factory,
    poolDeployer: venue.poolDeployer,
    initCodeHash: venue.initCodeHash,
    feeTiers: [...venue.feeTiers],
    tickSpacings: [...venue.tickSpacings],
    callback: venue.callback,
  }
}
