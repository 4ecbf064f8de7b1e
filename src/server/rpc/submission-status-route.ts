/**
 * `GET /v1/submissions/:hash`: what happened to a partner's submission ("why did it not land?").
 * Not part of the spec (section 3 leaves the lifecycle open); the lifecycle is ours
 * (src/submission/types.ts).
 *
 * - Authentication: `Authorization: Bearer <partner token>`, the same token as in the partner's
 *   RPC URLs, resolved by the PartnerRegistry (constant-time). Without it, or with an unknown
 *   token: 401 `{ code: 'UNAUTHORIZED', message }` and `WWW-Authenticate: Bearer`. Checked before
 *   anything else, so an unauthenticated caller learns nothing about hashes.
 * - `:hash` is the hash the RPC method returned (tx hash or bundle hash), 32 bytes of 0x-hex;
 *   anything else is 400 `{ code: 'VALIDATION_ERROR', message, details }`.
 * - 404 `{ code: 'NOT_FOUND', message }` when no submission of this partner has that hash, also
 *   when another partner submitted it: whether it exists is never revealed across partners.
 * - 200 `{ hash, submissions: [...] }`: one entry per kind this partner submitted under the hash
 *   (a tx may be notified and later sent privately), oldest first; see {@link SubmissionStatusView}.
 *   Amounts and block numbers are decimal strings; times are ms since the epoch (plus ISO 8601 for
 *   the receipt time). The signed backrun transaction itself is not shown, only its hash.
 *
 * The token is never logged here; the app's logger redacts the authorization header.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

import type { Address, Hex } from '../../chain/types.ts'
import { summarizeLifecycle, type LifecycleStage } from '../../submission/lifecycle.ts'
import type { LifecycleEvent, StoredSubmission, SubmissionKind } from '../../submission/types.ts'
import type { PartnerRegistry } from '../jsonrpc/partners.ts'
import { ref } from '../openapi/components.ts'
import { PARTNER_BEARER_SECURITY_SCHEME } from '../openapi/openapi.ts'

export const SUBMISSION_STATUS_PATH = '/v1/submissions/:hash'

/** The store reads the route needs; OutboxStore implements it. */
export interface SubmissionStatusStore {
  /** Every kind stored under `hash` that `partnerId` submitted; empty when none (or another partner's). */
  findForPartner(hash: Hex, partnerId: string): Promise<StoredSubmission[]>
}

export interface SubmissionStatusRouteOptions {
  store: SubmissionStatusStore
  partners: PartnerRegistry
}

export type SimulationView =
  | null
  | {
      at: number
      success: boolean
      revertReason?: string
      failedTxIndex?: number
      gasUsed?: string
      blockNumber?: string
      /** the simulation itself could not be run */
      error?: string
    }

export type BackrunView =
  /** not decided yet */
  | { status: 'pending' }
  | { status: 'appended'; txHash: Hex; grossProfit: string; profitToken: Address; netProfitWei?: string; gasUsed?: string }
  | { status: 'none'; reason: string }

export interface RelayView {
  relay: string
  /** of the newest block sent for */
  state: 'sending' | 'accepted' | 'failed'
  /** HTTP attempts for the newest block */
  attempts: number
  totalAttempts: number
  acceptedBlocks: number
  /** blocks the submission was sent to this relay for, ascending */
  blocksSent: string[]
  lastError?: string
}

/** One block of one submission: what was planned for it and what each relay said became of each bundle. */
export interface BlockView {
  block: string
  /** the backrun planned and signed for this block, or why none */
  backrun: { status: 'appended'; txHash: Hex; grossProfit: string; profitToken: Address; netProfitWei?: string; searcher?: Address } | { status: 'none'; reason: string } | null
  /** per relay and bundle (backrun, fallback or partner), where the relay tells: included | outbid | invalid | expired | pending | unknown */
  bundles: Array<{ relay: string; role: string; bundleHash: Hex; status: string; reason?: string }>
}

export type FinalStateView =
  | null
  /** backrunGrossProfit: what the landed backrun realized on chain (its Backrun event), beside the plan in `blocks` */
  | { state: 'included'; block: string; backrunIncluded?: boolean; backrunTxHash?: Hex; backrunGrossProfit?: string; at: number }
  | { state: 'expired'; lastBlock: string; reason: string; at: number }
  | { state: 'dropped'; reason: string; at: number }

/** One stored event, bigint fields as decimal strings, a backrun's raw tx left out. */
export interface EventView {
  type: LifecycleEvent['type']
  at: number
  [field: string]: string | number | boolean | readonly string[]
}

export interface SubmissionStatusView {
  kind: SubmissionKind
  hash: Hex
  /** ISO 8601 */
  receivedAt: string
  receivedAtMs: number
  txHashes: Hex[]
  bundleOptions?: { blockNumber?: string; minTimestamp?: string; maxTimestamp?: string; revertingTxHashes?: Hex[]; replacementUuid?: string }
  stage: LifecycleStage
  simulation: SimulationView
  backrun: BackrunView
  targeting: null | { firstBlock: string; lastBlock: string; relays: string[] }
  relays: RelayView[]
  /** per target block, oldest first: the backrun planned for it and each bundle's fate */
  blocks: BlockView[]
  final: FinalStateView
  events: EventView[]
}

export interface SubmissionStatusResponse {
  hash: Hex
  submissions: SubmissionStatusView[]
}

const HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * The route's schema, for the OpenAPI document. Fastify does not enforce it (the route's validator
 * and serializer compilers pass everything through): authentication comes before the hash is
 * checked, and every answer is written by the handler.
 */
export const submissionStatusRouteSchema = {
  operationId: 'getSubmissionStatus',
  summary: 'What became of a private submission',
  description:
    'The lifecycle of a submission made through the submit endpoint, for the partner that made it: simulation, per-relay forwarding, ' +
    'per target block the backrun planned (or why none) and each bundle\'s fate (`blocks`), and the final state (`final`). ' +
    'Times: `receivedAt` is ISO 8601; `receivedAtMs` and every `at` are milliseconds since the Unix epoch. ' +
    'Authentication is checked first (401), then the hash (400). Another partner\'s submission is 404, as if it did not exist.',
  tags: ['submissions'],
  security: [{ [PARTNER_BEARER_SECURITY_SCHEME]: [] }],
  params: {
    type: 'object',
    required: ['hash'],
    properties: { hash: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$', description: 'the hash the RPC method returned (transaction or bundle hash)' } },
  },
  response: {
    200: { description: 'The submissions of this partner under the hash.', ...ref('SubmissionStatusResponse') },
    400: { description: 'VALIDATION_ERROR: the hash is not 32 bytes of 0x-prefixed hex.', ...ref('ErrorResponse') },
    401: {
      description: 'UNAUTHORIZED: no Authorization header, not the Bearer scheme, or an unknown partner token. Sent with WWW-Authenticate: Bearer.',
      ...ref('ErrorResponse'),
      headers: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="submissions"' } },
    },
    404: { description: 'NOT_FOUND: no submission of this partner has that hash.', ...ref('ErrorResponse') },
    500: { description: 'INTERNAL_ERROR: the status could not be read; retry.', ...ref('ErrorResponse') },
  },
}
const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

export function registerSubmissionStatusRoute(app: FastifyInstance, options: SubmissionStatusRouteOptions): void {
  if (typeof options.store?.findForPartner !== 'function') throw new TypeError('registerSubmissionStatusRoute: store must have findForPartner')
  if (typeof options.partners?.resolve !== 'function') throw new TypeError('registerSubmissionStatusRoute: partners must be a PartnerRegistry')
  app.get<{ Params: { hash: string } }>(
    SUBMISSION_STATUS_PATH,
    {
      schema: submissionStatusRouteSchema,
      // documentation only: Fastify's validation would answer before the token is checked, and the
      // handler writes its bodies itself (see the schema's comment)
      validatorCompiler: () => () => true,
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    (req, reply) => handle(options, req, reply),
  )
}

const HASH_MESSAGE = 'hash must be the 32-byte 0x-prefixed hex hash returned by the RPC method'

/**
 * The 401 of a request without a valid partner token, or undefined with the partner id. Sent
 * before anything else is looked at, also for a path the router could not match (see
 * {@link answerUnroutableStatusRequest}).
 */
function authenticate(partners: PartnerRegistry, req: FastifyRequest, reply: FastifyReply): { partnerId: string } | { sent: FastifyReply } {
  reply.header('cache-control', 'no-store')
  const header = req.headers.authorization
  if (typeof header !== 'string' || header === '') {
    return { sent: unauthorized(reply, 'missing Authorization header: send "Authorization: Bearer <partner token>"') }
  }
  const match = BEARER.exec(header)
  const partnerId = match === null ? undefined : partners.resolve(match[1])
  if (partnerId === undefined) {
    req.log.info('submission status request with an invalid partner token refused')
    return { sent: unauthorized(reply, match === null ? 'the Authorization header must use the Bearer scheme' : 'invalid partner token') }
  }
  return { partnerId }
}

function invalidHash(reply: FastifyReply): FastifyReply {
  return send(reply, 400, { code: 'VALIDATION_ERROR', message: HASH_MESSAGE, details: [{ field: 'hash', message: HASH_MESSAGE }] })
}

/**
 * A GET under /v1/submissions/ whose hash segment the router refused (longer than
 * `maxParamLength`, or not valid percent-encoding): answered as the route answers an invalid
 * hash, authentication first (401), then 400 VALIDATION_ERROR.
 */
export function answerUnroutableStatusRequest(partners: PartnerRegistry, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const auth = authenticate(partners, req, reply)
  if ('sent' in auth) return auth.sent
  return invalidHash(reply)
}

async function handle(options: SubmissionStatusRouteOptions, req: FastifyRequest<{ Params: { hash: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  const auth = authenticate(options.partners, req, reply)
  if ('sent' in auth) return auth.sent
  const partnerId = auth.partnerId

  const raw = req.params.hash
  if (!HASH.test(raw)) return invalidHash(reply)
  const hash = raw.toLowerCase() as Hex

  let found: StoredSubmission[]
  try {
    found = await options.store.findForPartner(hash, partnerId)
  } catch (err) {
    req.log.error({ err, hash }, 'reading a submission status failed')
    return send(reply, 500, { code: 'INTERNAL_ERROR', message: 'internal error: the submission status could not be read; retry' })
  }
  if (found.length === 0) return send(reply, 404, { code: 'NOT_FOUND', message: `no submission with hash ${hash} for this partner` })
  const submissions = found.map(submissionStatusView).sort((a, b) => a.receivedAtMs - b.receivedAtMs)
  const body: SubmissionStatusResponse = { hash, submissions }
  return send(reply, 200, body)
}

function unauthorized(reply: FastifyReply, message: string): FastifyReply {
  reply.header('www-authenticate', 'Bearer realm="submissions"')
  return send(reply, 401, { code: 'UNAUTHORIZED', message })
}

function send(reply: FastifyReply, status: number, body: object): FastifyReply {
  return reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(JSON.stringify(body))
}

// ---------------------------------------------------------------------------------------------

/** The public view of one stored submission. */
export function submissionStatusView(stored: StoredSubmission): SubmissionStatusView {
  const { record, events } = stored
  const summary = summarizeLifecycle(events)
  const view: SubmissionStatusView = {
    kind: record.kind,
    hash: record.hash,
    receivedAt: new Date(record.receivedAt).toISOString(),
    receivedAtMs: record.receivedAt,
    txHashes: [...record.txHashes],
    stage: summary.stage,
    simulation: null,
    backrun: { status: 'pending' },
    targeting: null,
    relays: [],
    blocks: blockViews(events),
    final: null,
    events: events.map(eventView),
  }
  const o = record.bundleOptions
  if (o !== undefined) {
    view.bundleOptions = {
      ...(o.blockNumber === undefined ? {} : { blockNumber: o.blockNumber.toString() }),
      ...(o.minTimestamp === undefined ? {} : { minTimestamp: o.minTimestamp.toString() }),
      ...(o.maxTimestamp === undefined ? {} : { maxTimestamp: o.maxTimestamp.toString() }),
      ...(o.revertingTxHashes === undefined ? {} : { revertingTxHashes: [...o.revertingTxHashes] }),
      ...(o.replacementUuid === undefined ? {} : { replacementUuid: o.replacementUuid }),
    }
  }
  const sim = summary.simulation
  if (sim !== undefined) {
    view.simulation = {
      at: sim.at,
      success: sim.success,
      ...(sim.revertReason === undefined ? {} : { revertReason: sim.revertReason }),
      ...(sim.failedTxIndex === undefined ? {} : { failedTxIndex: sim.failedTxIndex }),
      ...(sim.gasUsed === undefined ? {} : { gasUsed: sim.gasUsed.toString() }),
      ...(sim.blockNumber === undefined ? {} : { blockNumber: sim.blockNumber.toString() }),
      ...(sim.error === undefined ? {} : { error: sim.error }),
    }
  }
  if (summary.backrun === null) {
    view.backrun = { status: 'none', reason: summary.noBackrunReason ?? 'no backrun' }
  } else if (summary.backrun !== undefined) {
    const b = summary.backrun
    view.backrun = {
      status: 'appended',
      txHash: b.txHash,
      grossProfit: b.grossProfit.toString(),
      profitToken: b.profitToken,
      ...(b.netProfitWei === undefined ? {} : { netProfitWei: b.netProfitWei.toString() }),
      ...(b.gasUsed === undefined ? {} : { gasUsed: b.gasUsed.toString() }),
    }
  }
  if (summary.targeting !== undefined) {
    const t = summary.targeting
    view.targeting = { firstBlock: t.firstBlock.toString(), lastBlock: t.lastBlock.toString(), relays: [...t.relays] }
  }
  view.relays = [...summary.relays.values()].map((r) => ({
    relay: r.relay,
    state: r.state,
    attempts: r.attempts,
    totalAttempts: r.totalAttempts,
    acceptedBlocks: r.acceptedBlocks,
    blocksSent: r.blocks.map((b) => b.toString()),
    ...(r.lastError === undefined ? {} : { lastError: r.lastError }),
  }))
  const outcome = summary.outcome
  if (outcome !== undefined) {
    switch (outcome.type) {
      case 'included':
        view.final = {
          state: 'included',
          block: outcome.block.toString(),
          ...(outcome.backrunIncluded === undefined ? {} : { backrunIncluded: outcome.backrunIncluded }),
          ...(outcome.backrunTxHash === undefined ? {} : { backrunTxHash: outcome.backrunTxHash }),
          ...(outcome.backrunGrossProfit === undefined ? {} : { backrunGrossProfit: outcome.backrunGrossProfit.toString() }),
          at: outcome.at,
        }
        break
      case 'expired':
        view.final = { state: 'expired', lastBlock: outcome.lastBlock.toString(), reason: outcome.reason, at: outcome.at }
        break
      case 'dropped':
        view.final = { state: 'dropped', reason: outcome.reason, at: outcome.at }
        break
    }
  }
  return view
}

function blockViews(events: readonly LifecycleEvent[]): BlockView[] {
  const blocks = new Map<bigint, BlockView>()
  const at = (block: bigint): BlockView => {
    let view = blocks.get(block)
    if (view === undefined) {
      view = { block: block.toString(), backrun: null, bundles: [] }
      blocks.set(block, view)
    }
    return view
  }
  for (const e of events) {
    if (e.type === 'backrun' && e.block !== undefined) {
      at(e.block).backrun = {
        status: 'appended',
        txHash: e.txHash,
        grossProfit: e.grossProfit.toString(),
        profitToken: e.profitToken,
        ...(e.netProfitWei === undefined ? {} : { netProfitWei: e.netProfitWei.toString() }),
        ...(e.searcher === undefined ? {} : { searcher: e.searcher }),
      }
    } else if (e.type === 'no-backrun' && e.block !== undefined) {
      at(e.block).backrun = { status: 'none', reason: e.reason }
    } else if (e.type === 'bundle-outcome') {
      at(e.block).bundles.push({ relay: e.relay, role: e.role, bundleHash: e.bundleHash, status: e.status, ...(e.reason === undefined ? {} : { reason: e.reason }) })
    }
  }
  return [...blocks.values()].sort((a, b) => (BigInt(a.block) < BigInt(b.block) ? -1 : 1))
}

function eventView(event: LifecycleEvent): EventView {
  const out: EventView = { type: event.type, at: event.at }
  for (const [key, value] of Object.entries(event) as Array<[string, unknown]>) {
    if (key === 'type' || key === 'at' || key === 'rawTx' || value === undefined) continue
    if (typeof value === 'bigint') out[key] = value.toString()
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value
    else if (Array.isArray(value)) out[key] = value.map(String)
  }
  return out
}
