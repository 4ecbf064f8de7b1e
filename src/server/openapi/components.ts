/**
 * The shared schemas of the OpenAPI document (`components.schemas`), added to the app with
 * `app.addSchema` so route schemas reference them as `{ $ref: '<Name>#' }` and @fastify/swagger
 * emits each one once under `#/components/schemas/<Name>`.
 *
 * The document is OpenAPI 3.0.3: null is written `nullable: true` next to a `type`.
 *
 * Which of these Fastify enforces: the health and readiness bodies are serialized with their
 * schemas (fast-json-stringify). The JSON-RPC and submission-status routes send bodies they
 * encode themselves and take their schemas for documentation only (their validator and
 * serializer compilers pass everything through), because Fastify's own validation would answer
 * before the partner token is checked and with bodies other than the documented JSON-RPC errors.
 */
import type { FastifyInstance } from 'fastify'

/** The `$id`s of the shared schemas: `#/components/schemas/<name>` in the document. */
export const SHARED_SCHEMA_NAMES = [
  'ErrorResponse',
  'Health',
  'Readiness',
  'JsonRpcId',
  'JsonRpcErrorObject',
  'JsonRpcErrorResponse',
  'EthBackrunParams',
  'EthBackrunResult',
  'EthBackrunRequest',
  'EthBackrunResponse',
  'RawTransactionParams',
  'SendBundleParams',
  'EthSendPrivateRawTransactionRequest',
  'EthNotifyRawTransactionRequest',
  'EthSendBundleRequest',
  'SubmissionHashResponse',
  'SimulationView',
  'BackrunView',
  'RelayView',
  'BlockView',
  'FinalState',
  'LifecycleEvent',
  'SubmissionStatus',
  'SubmissionStatusResponse',
] as const
export type SharedSchemaName = (typeof SHARED_SCHEMA_NAMES)[number]

/** `{ $ref: 'Name#' }`: a reference to a shared schema, as Fastify and @fastify/swagger read it */
export function ref(name: SharedSchemaName): { $ref: string } {
  return { $ref: `${name}#` }
}

/** Every `code` an error body of the HTTP (non-JSON-RPC) routes can carry. */
export const HTTP_ERROR_CODES = [
  'UNAUTHORIZED',
  'VALIDATION_ERROR',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMIT_EXCEEDED',
  'QUOTE_ERROR',
  'UPSTREAM_ERROR',
  'REQUEST_TIMEOUT',
  'SERVICE_UNAVAILABLE',
  'INTERNAL_ERROR',
] as const
export type HttpErrorCode = (typeof HTTP_ERROR_CODES)[number]

const HASH = { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$', description: '32 bytes, 0x-prefixed hex' } as const
const ADDRESS = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', description: '20-byte address, 0x-prefixed hex' } as const
const DECIMAL = { type: 'string', pattern: '^-?\\d+$', description: 'an integer as a decimal string' } as const
const HEX_BYTES = { type: 'string', pattern: '^0x([0-9a-fA-F]{2})*$', description: '0x-prefixed hex of whole bytes' } as const
const EPOCH_MS = { type: 'integer', minimum: 0, description: 'milliseconds since the Unix epoch (1970-01-01T00:00:00Z)' } as const

const errorResponse = {
  $id: 'ErrorResponse',
  type: 'object',
  description:
    'Every error answer of the HTTP routes (everything but the JSON-RPC endpoints): `code` is stable, `message` is for people. ' +
    'An unknown path answers 404 NOT_FOUND, a known path with another method 405 METHOD_NOT_ALLOWED (with Allow), a malformed URL 400 VALIDATION_ERROR, ' +
    'a request line and headers over 16 KiB 431 VALIDATION_ERROR, a request not received in time 408 REQUEST_TIMEOUT; ' +
    'no error body ever repeats the request URL.',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', enum: [...HTTP_ERROR_CODES] },
    message: { type: 'string' },
    details: {
      type: 'array',
      description: 'VALIDATION_ERROR: one entry per violation',
      items: {
        type: 'object',
        required: ['field', 'message'],
        additionalProperties: false,
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
}

const health = {
  $id: 'Health',
  type: 'object',
  description: 'The process is running.',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: ['ok'] } },
}

const readiness = {
  $id: 'Readiness',
  type: 'object',
  description: 'Whether state can be read and submissions stored (200 ready, 503 unavailable), the mode, the chain id, the head block and the submission store.',
  required: ['status', 'mode', 'chainId', 'blockNumber'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ready', 'unavailable'] },
    mode: { type: 'string', enum: ['devnet', 'fork'] },
    chainId: DECIMAL,
    blockNumber: DECIMAL,
    submissionStore: {
      type: 'string',
      enum: ['ready', 'unavailable'],
      description: 'where private submissions are served: whether their store (LevelDB, or PostgreSQL with DATABASE_URL) can be written',
    },
  },
}

// ---- JSON-RPC ------------------------------------------------------------------------------

const jsonRpcId = {
  $id: 'JsonRpcId',
  description: "The request's id: a string or an integer of at most 2^53-1 in magnitude. Without an id the request is a notification and gets no answer.",
  oneOf: [{ type: 'string' }, { type: 'integer' }],
}

const jsonRpcErrorObject = {
  $id: 'JsonRpcErrorObject',
  type: 'object',
  description:
    '-32700 the body is not JSON; -32600 not a valid request (envelope, params not an array of one object, empty or oversized batch, malformed Content-Type, body too large); ' +
    '-32601 unknown method or a method of the other endpoint; -32000 a missing or malformed field of the parameter object (named in the message; the submission methods add `data: { field, reason }`); ' +
    '-32001 unknown partner token (HTTP 401); -32603 internal error (the submission methods add `data: { reason: "persistence" | "outbox_full" }`: nothing was accepted).',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: {
    code: { type: 'integer', enum: [-32700, -32600, -32601, -32000, -32001, -32603] },
    message: { type: 'string' },
    data: { type: 'object', additionalProperties: true },
  },
}

const jsonRpcErrorResponse = {
  $id: 'JsonRpcErrorResponse',
  type: 'object',
  required: ['jsonrpc', 'id', 'error'],
  additionalProperties: false,
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { ...jsonRpcIdInline(), nullable: true, description: "the request's id; null when it could not be read" },
    error: ref('JsonRpcErrorObject'),
  },
}

function jsonRpcIdInline() {
  return { oneOf: [{ type: 'string' }, { type: 'integer' }] }
}

/** A request envelope for one method whose params are `[<paramsSchema>]`. */
function requestSchema(id: SharedSchemaName, method: string, paramsName: SharedSchemaName, description: string) {
  return {
    $id: id,
    type: 'object',
    description,
    required: ['jsonrpc', 'method', 'params'],
    properties: {
      jsonrpc: { type: 'string', enum: ['2.0'] },
      id: ref('JsonRpcId'),
      method: { type: 'string', enum: [method] },
      params: { type: 'array', minItems: 1, maxItems: 1, description: 'exactly one parameter object', items: ref(paramsName) },
    },
  }
}

function successSchema(id: SharedSchemaName, result: object) {
  return {
    $id: id,
    type: 'object',
    required: ['jsonrpc', 'id', 'result'],
    additionalProperties: false,
    properties: { jsonrpc: { type: 'string', enum: ['2.0'] }, id: ref('JsonRpcId'), result },
  }
}

const ethBackrunParams = {
  $id: 'EthBackrunParams',
  type: 'object',
  description: "The partner's user transaction. Unknown members are refused (-32000).",
  required: ['to', 'calldata', 'tokenIn', 'amountIn'],
  additionalProperties: false,
  properties: {
    to: { ...ADDRESS, description: 'the contract the user calls (a router)' },
    calldata: { ...HEX_BYTES, description: "the user's calldata, at most 128 KiB" },
    value: { type: 'string', pattern: '^(0|[1-9]\\d*)$', description: 'wei sent with the call (decimal string); default 0' },
    tokenIn: { ...ADDRESS, description: 'the token the user pays; 0xeeee…eeee or the zero address for ETH (covered by value)' },
    amountIn: { type: 'string', pattern: '^[1-9]\\d*$', description: 'amount of tokenIn, base units (decimal string)' },
  },
}

const backrunHop = {
  type: 'object',
  required: ['protocol', 'pool', 'tokenIn', 'tokenOut', 'fee'],
  additionalProperties: false,
  properties: {
    protocol: { type: 'string', enum: ['uniswap-v2', 'uniswap-v3', 'uniswap-v4'] },
    pool: ADDRESS,
    tokenIn: ADDRESS,
    tokenOut: ADDRESS,
    fee: { type: 'integer' },
  },
}

const ethBackrunResult = {
  $id: 'EthBackrunResult',
  type: 'object',
  nullable: true,
  description: 'The best backrun, or null when the call reverts or no backrun nets more than BACKRUN_MIN_NET_PROFIT_WEI.',
  required: ['calldata', 'contract', 'gas', 'profitToken', 'grossProfit', 'netProfitEth', 'netProfitUsd', 'amountIn', 'blockNumber', 'hops'],
  additionalProperties: false,
  properties: {
    calldata: { ...HEX_BYTES, description: 'call `contract` with this right after the user\'s swap, in the same transaction' },
    contract: { ...ADDRESS, description: 'our BackrunExecutor' },
    gas: { type: 'integer', description: "gas of the backrun portion (executed after the user's call, less the 21,000 a transaction pays once)" },
    profitToken: ADDRESS,
    grossProfit: { ...DECIMAL, description: 'gross profit in profitToken base units' },
    netProfitEth: { type: 'string', pattern: '^-?\\d+(\\.\\d{1,18})?$', description: 'net of gas, in ETH (up to 18 decimals)' },
    netProfitUsd: { type: 'string', pattern: '^-?\\d+(\\.\\d{1,6})?$', description: 'netProfitEth x the ETH/USD feed, 6 decimals, truncated' },
    amountIn: { ...DECIMAL, description: 'flash-borrowed input of the cycle' },
    blockNumber: { ...DECIMAL, description: 'the head the backrun was computed on' },
    hops: { type: 'array', items: backrunHop },
  },
}

const rawTransactionParams = {
  $id: 'RawTransactionParams',
  type: 'object',
  required: ['tx'],
  additionalProperties: false,
  properties: { tx: { ...HEX_BYTES, description: 'a signed raw transaction (legacy, 2930, 1559 or 7702), at most MAX_RAW_TX_BYTES' } },
}

const sendBundleParams = {
  $id: 'SendBundleParams',
  type: 'object',
  description: 'A bundle in the Flashbots format.',
  required: ['txs'],
  additionalProperties: false,
  properties: {
    txs: { type: 'array', minItems: 1, items: HEX_BYTES, description: 'signed raw transactions, at most MAX_BUNDLE_TXS, MAX_BUNDLE_BYTES together' },
    blockNumber: { type: 'string', pattern: '^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$', description: 'target block, hex quantity; after the head and at most 100 blocks ahead' },
    minTimestamp: { description: 'unix seconds (a number, or a hex quantity string)', oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }] },
    maxTimestamp: { description: 'unix seconds (a number, or a hex quantity string); not yet passed', oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }] },
    revertingTxHashes: { type: 'array', items: HASH, description: 'hashes of transactions of this bundle allowed to revert' },
    replacementUuid: { type: 'string', format: 'uuid' },
  },
}

const transactionHashResult = { ...HASH, description: 'the transaction hash (keccak256 of the raw bytes) or the bundle hash (keccak256 of its transaction hashes concatenated); returned once the submission is fsynced' }

// ---- GET /v1/submissions/{hash} -----------------------------------------------------------

const simulationView = {
  $id: 'SimulationView',
  type: 'object',
  nullable: true,
  description: 'The latest simulation on the head; null before the first.',
  required: ['at', 'success'],
  additionalProperties: false,
  properties: {
    at: EPOCH_MS,
    success: { type: 'boolean' },
    revertReason: { type: 'string' },
    failedTxIndex: { type: 'integer' },
    gasUsed: DECIMAL,
    blockNumber: DECIMAL,
    error: { type: 'string', description: 'the simulation itself could not be run' },
  },
}

const backrunView = {
  $id: 'BackrunView',
  type: 'object',
  description: 'The latest backrun decision: pending (not decided yet), appended (with its transaction) or none (with why).',
  required: ['status'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['pending', 'appended', 'none'] },
    txHash: HASH,
    grossProfit: DECIMAL,
    profitToken: ADDRESS,
    netProfitWei: DECIMAL,
    gasUsed: DECIMAL,
    reason: { type: 'string' },
  },
}

const relayView = {
  $id: 'RelayView',
  type: 'object',
  required: ['relay', 'state', 'attempts', 'totalAttempts', 'acceptedBlocks', 'blocksSent'],
  additionalProperties: false,
  properties: {
    relay: { type: 'string' },
    state: { type: 'string', enum: ['sending', 'accepted', 'failed'], description: 'of the newest block sent for' },
    attempts: { type: 'integer', description: 'HTTP attempts for the newest block' },
    totalAttempts: { type: 'integer' },
    acceptedBlocks: { type: 'integer' },
    blocksSent: { type: 'array', items: DECIMAL, description: 'ascending' },
    lastError: { type: 'string' },
  },
}

const blockView = {
  $id: 'BlockView',
  type: 'object',
  description: 'One target block: the backrun planned for it (or why none) and what each relay said became of each bundle.',
  required: ['block', 'backrun', 'bundles'],
  additionalProperties: false,
  properties: {
    block: DECIMAL,
    backrun: {
      type: 'object',
      nullable: true,
      description: 'appended (profit, searcher) or none (reason); null when nothing was planned for the block',
      required: ['status'],
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ['appended', 'none'] },
        txHash: HASH,
        grossProfit: DECIMAL,
        profitToken: ADDRESS,
        netProfitWei: DECIMAL,
        searcher: ADDRESS,
        reason: { type: 'string' },
      },
    },
    bundles: {
      type: 'array',
      items: {
        type: 'object',
        required: ['relay', 'role', 'bundleHash', 'status'],
        additionalProperties: false,
        properties: {
          relay: { type: 'string' },
          role: { type: 'string', description: "user (the user's own bundle), backrun (with our backrun), or partner" },
          bundleHash: HASH,
          status: { type: 'string', description: 'included | outbid | invalid | expired | pending | unknown' },
          reason: { type: 'string' },
        },
      },
    },
  },
}

const finalState = {
  $id: 'FinalState',
  type: 'object',
  nullable: true,
  description: 'null while open; included in `block` (with the landed backrun and its realized gross profit), expired after `lastBlock`, or dropped with the reason.',
  required: ['state', 'at'],
  additionalProperties: false,
  properties: {
    state: { type: 'string', enum: ['included', 'expired', 'dropped'] },
    block: DECIMAL,
    backrunIncluded: { type: 'boolean' },
    backrunTxHash: HASH,
    backrunGrossProfit: { ...DECIMAL, description: "what the landed backrun realized on chain (its receipt's Backrun event)" },
    lastBlock: DECIMAL,
    reason: { type: 'string' },
    at: EPOCH_MS,
  },
}

const lifecycleEvent = {
  $id: 'LifecycleEvent',
  type: 'object',
  description: 'One stored event; integers as decimal strings; the signed backrun transaction is left out.',
  required: ['type', 'at'],
  properties: {
    type: { type: 'string', enum: ['received', 'simulated', 'backrun', 'no-backrun', 'bundle-outcome', 'targeting', 'relay-sending', 'relay-result', 'reorg', 'included', 'expired', 'dropped'] },
    at: EPOCH_MS,
  },
  additionalProperties: {
    oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'array', items: { type: 'string' } }],
  },
}

const submissionStatus = {
  $id: 'SubmissionStatus',
  type: 'object',
  required: ['kind', 'hash', 'receivedAt', 'receivedAtMs', 'txHashes', 'stage', 'simulation', 'backrun', 'targeting', 'relays', 'blocks', 'final', 'events'],
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['private-tx', 'bundle', 'notify'] },
    hash: HASH,
    receivedAt: { type: 'string', format: 'date-time', description: 'when it was accepted, ISO 8601 (UTC)' },
    receivedAtMs: { ...EPOCH_MS, description: 'the same instant as receivedAt, in milliseconds since the Unix epoch' },
    txHashes: { type: 'array', items: HASH },
    bundleOptions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        blockNumber: DECIMAL,
        minTimestamp: { ...DECIMAL, description: 'unix seconds' },
        maxTimestamp: { ...DECIMAL, description: 'unix seconds' },
        revertingTxHashes: { type: 'array', items: HASH },
        replacementUuid: { type: 'string' },
      },
    },
    stage: { type: 'string', enum: ['received', 'simulated', 'planned', 'dispatching', 'included', 'expired', 'dropped'] },
    simulation: ref('SimulationView'),
    backrun: ref('BackrunView'),
    targeting: {
      type: 'object',
      nullable: true,
      required: ['firstBlock', 'lastBlock', 'relays'],
      additionalProperties: false,
      properties: { firstBlock: DECIMAL, lastBlock: DECIMAL, relays: { type: 'array', items: { type: 'string' } } },
    },
    relays: { type: 'array', items: ref('RelayView') },
    blocks: { type: 'array', description: 'per target block, oldest first', items: ref('BlockView') },
    final: ref('FinalState'),
    events: { type: 'array', items: ref('LifecycleEvent') },
  },
}

const submissionStatusResponse = {
  $id: 'SubmissionStatusResponse',
  type: 'object',
  description: 'One entry per kind this partner submitted under the hash, oldest first.',
  required: ['hash', 'submissions'],
  additionalProperties: false,
  properties: { hash: HASH, submissions: { type: 'array', minItems: 1, items: ref('SubmissionStatus') } },
}

/** Every shared schema, each with its `$id`, in SHARED_SCHEMA_NAMES order. */
export function sharedSchemas(): object[] {
  const built: Record<SharedSchemaName, object> = {
    ErrorResponse: errorResponse,
    Health: health,
    Readiness: readiness,
    JsonRpcId: jsonRpcId,
    JsonRpcErrorObject: jsonRpcErrorObject,
    JsonRpcErrorResponse: jsonRpcErrorResponse,
    EthBackrunParams: ethBackrunParams,
    EthBackrunResult: ethBackrunResult,
    EthBackrunRequest: requestSchema('EthBackrunRequest', 'eth_backrun', 'EthBackrunParams', 'eth_backrun: find the backrun of a user transaction.'),
    EthBackrunResponse: successSchema('EthBackrunResponse', ref('EthBackrunResult')),
    RawTransactionParams: rawTransactionParams,
    SendBundleParams: sendBundleParams,
    EthSendPrivateRawTransactionRequest: requestSchema(
      'EthSendPrivateRawTransactionRequest',
      'eth_sendPrivateRawTransaction',
      'RawTransactionParams',
      'eth_sendPrivateRawTransaction: deliver a signed transaction privately (with a backrun when one pays).',
    ),
    EthNotifyRawTransactionRequest: requestSchema(
      'EthNotifyRawTransactionRequest',
      'eth_notifyRawTransaction',
      'RawTransactionParams',
      'eth_notifyRawTransaction: the partner sends the transaction itself; we race a backrun referencing it by hash (relays with hashReference only).',
    ),
    EthSendBundleRequest: requestSchema('EthSendBundleRequest', 'eth_sendBundle', 'SendBundleParams', 'eth_sendBundle: deliver a bundle privately.'),
    SubmissionHashResponse: successSchema('SubmissionHashResponse', transactionHashResult),
    SimulationView: simulationView,
    BackrunView: backrunView,
    RelayView: relayView,
    BlockView: blockView,
    FinalState: finalState,
    LifecycleEvent: lifecycleEvent,
    SubmissionStatus: submissionStatus,
    SubmissionStatusResponse: submissionStatusResponse,
  }
  return SHARED_SCHEMA_NAMES.map((name) => built[name])
}

/** Adds every shared schema to `app` (call on the root before the routes that reference them). */
export function addSharedSchemas(app: FastifyInstance): void {
  for (const schema of sharedSchemas()) app.addSchema(schema)
}
