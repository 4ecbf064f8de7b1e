/**
 * JSON schemas of POST /v1/quote. They serve three purposes:
 * - response schemas drive Fastify's compiled serializer (fast-json-stringify): fast, and it
 *   writes ONLY the declared properties, so an extra field on a domain object never leaks;
 * - @fastify/swagger turns them into the OpenAPI document;
 * - the body schema documents the request. Enforcement is parseQuoteRequest (see
 *   quote-request.ts for why); both read their patterns and bounds from the same constants.
 */
import type { QuoteFailureReason } from '../../quote/types.ts'
import { API_KEY_SECURITY_SCHEME } from '../openapi/openapi.ts'
import { ADDRESS_PATTERN, AMOUNT_PATTERN, MAX_UINT256, SLIPPAGE_BPS_MAX, SLIPPAGE_BPS_MIN } from './quote-request.ts'

const address = (description: string) => ({ type: 'string', pattern: ADDRESS_PATTERN.source, description }) as const
const amount = (description: string) => ({ type: 'string', pattern: '^\\d+$', description }) as const

export const quoteRequestSchema = {
  type: 'object',
  description: 'QuoteParams. Unrecognised fields are rejected with 400 (a misspelt optional field must not silently fall back to its default).',
  required: ['tokenIn', 'tokenOut', 'amountIn'],
  additionalProperties: false,
  properties: {
    tokenIn: address('Input token contract address.'),
    tokenOut: address('Output token contract address.'),
    amountIn: {
      type: 'string',
      pattern: AMOUNT_PATTERN.source,
      maxLength: MAX_UINT256.toString().length,
      description: `Input amount in wei: a uint256 as a decimal string, greater than 0, no leading zero, at most ${MAX_UINT256} (2^256-1).`,
    },
    slippageBps: {
      type: 'integer',
      minimum: SLIPPAGE_BPS_MIN,
      maximum: SLIPPAGE_BPS_MAX,
      description: 'Optional. Slippage tolerance in basis points used for minAmountOut (default 50).',
    },
    recipient: address('Optional. Receiver of tokenOut when the calldata executes (default: the caller).'),
    sender: address(
      'Optional. The account that will send the swap transaction. The quote is executed from it with its real balances and allowance (topped up only where short), so `gas` matches its transaction; default: a fresh account holding exactly amountIn.',
    ),
  },
} as const

const hopSchema = {
  type: 'object',
  required: ['protocol', 'pool', 'tokenIn', 'tokenOut', 'fee'],
  additionalProperties: false,
  properties: {
    protocol: { type: 'string', enum: ['uniswap-v2', 'uniswap-v3', 'uniswap-v4'] },
    pool: address('Pool or pair contract.'),
    tokenIn: address('Token entering the hop.'),
    tokenOut: address('Token leaving the hop.'),
    fee: { type: 'integer', description: 'Pool fee in hundredths of a basis point (V2 pairs: 3000).' },
  },
} as const

const rateLimitHeaders = {
  'RateLimit-Limit': { type: 'integer', description: 'Requests allowed per window for this API key.' },
  'RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window.' },
  'RateLimit-Reset': { type: 'integer', description: 'Seconds until the window resets.' },
} as const

export const quoteResultSchema = {
  type: 'object',
  description: 'The best quote found. The first five fields are QuoteResult (spec 2.2); the rest are additive.',
  headers: rateLimitHeaders,
  required: ['amountOut', 'gas', 'calldata', 'router', 'spender', 'blockNumber', 'minAmountOut', 'routes'],
  additionalProperties: false,
  properties: {
    amountOut: amount('Output amount in wei (uint256 decimal string).'),
    gas: { type: 'integer', description: 'Estimated gas cost.' },
    calldata: { type: 'string', pattern: '^0x([a-fA-F0-9]{2})*$', description: 'Calldata of the swap transaction.' },
    router: address('Router contract to call.'),
    spender: address('Address to approve tokenIn to.'),
    blockNumber: amount('Block whose state the quote was computed on (decimal string).'),
    minAmountOut: amount('amountOut less the slippage tolerance, in wei (decimal string).'),
    priceImpactBps: { type: 'number', description: 'Price impact of the trade in basis points.' },
    routes: {
      type: 'array',
      description: 'How amountIn is split; each route is a sequence of pool hops.',
      items: {
        type: 'object',
        required: ['amountIn', 'amountOut', 'hops'],
        additionalProperties: false,
        properties: {
          amountIn: amount('Share of amountIn sent down this route (wei).'),
          amountOut: amount('Output of this route (wei).'),
          hops: { type: 'array', items: hopSchema },
        },
      },
    },
  },
} as const

const errorSchema = (description: string, code: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  description,
  required: ['code', 'message'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', enum: [code] },
    message: { type: 'string', description: 'Human-readable; informational, not contract.' },
  },
  ...extra,
})

const QUOTE_FAILURE_REASONS: readonly QuoteFailureReason[] = ['NO_ROUTE', 'AMOUNT_TOO_SMALL', 'INSUFFICIENT_LIQUIDITY', 'SAME_TOKEN', 'NOT_A_TOKEN', 'SIMULATION_FAILED']

const validationErrorSchema = {
  ...errorSchema(
    'ValidationError: invalid request data. One details entry per violation. Also used for a body that is not a JSON object, is not valid JSON, is too large, or is not sent as application/json.',
    'VALIDATION_ERROR',
  ),
  required: ['code', 'message', 'details'],
  properties: {
    code: { type: 'string', enum: ['VALIDATION_ERROR'] },
    message: { type: 'string', description: 'Human-readable; informational, not contract.' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        additionalProperties: false,
        properties: {
          field: { type: 'string', description: 'Body field name; `body` for the body as a whole; `Content-Type` for the header.' },
          message: { type: 'string' },
        },
      },
    },
  },
}

const quoteErrorSchema = {
  ...errorSchema('QuoteError: no quote can be produced (no route, insufficient liquidity, ...).', 'QUOTE_ERROR'),
  required: ['code', 'message', 'details'],
  properties: {
    code: { type: 'string', enum: ['QUOTE_ERROR'] },
    message: { type: 'string', description: 'Human-readable; informational, not contract.' },
    details: {
      type: 'object',
      description:
        '`reason` classifies the failure: NO_ROUTE (no pools join the tokens), AMOUNT_TOO_SMALL (amountIn is dust: the output rounds down to zero on every route), ' +
        'INSUFFICIENT_LIQUIDITY (the pools on every route are too shallow for the amount), SAME_TOKEN, NOT_A_TOKEN, SIMULATION_FAILED (the route reverted in the EVM). ' +
        'Other members depend on the reason.',
      required: ['reason'],
      additionalProperties: true,
      properties: { reason: { type: 'string', enum: QUOTE_FAILURE_REASONS } },
    },
  },
}

/**
 * const + default make the compiled serializer write this exact body whatever object it is
 * given. That matters when a hook outside this plugin keeps failing: Fastify then falls back to
 * its parent and last-resort error handlers, which serialize the raw Error (message included)
 * with the route's schema for the status; for 500 this schema can only ever produce the fixed
 * text.
 */
const internalErrorSchema = {
  type: 'object',
  description: 'Unexpected internal failure; no details are disclosed.',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', const: 'INTERNAL_ERROR', default: 'INTERNAL_ERROR' },
    message: { type: 'string', const: 'internal error', default: 'internal error' },
  },
}

export const quoteRouteSchema = {
  operationId: 'getSwapQuote',
  summary: 'Get swap quote',
  description: 'Returns the best swap quote for a token pair and an input amount.',
  tags: ['quote'],
  security: [{ [API_KEY_SECURITY_SCHEME]: [] }],
  consumes: ['application/json'],
  body: quoteRequestSchema,
  response: {
    200: quoteResultSchema,
    400: validationErrorSchema,
    401: errorSchema('UnauthorizedError: missing or invalid API key.', 'UNAUTHORIZED'),
    422: quoteErrorSchema,
    429: {
      ...errorSchema('RateLimitError: rate limit of this API key exceeded.', 'RATE_LIMIT_EXCEEDED'),
      headers: { ...rateLimitHeaders, 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
    },
    500: internalErrorSchema,
    502: errorSchema('UpstreamError: an upstream node is unreachable or returned an error.', 'UPSTREAM_ERROR'),
  },
}
