/** The JSON-RPC 2.0 layer shared by the four RPC methods: envelope, routing, auth, batches. */
export { answerRpcWhileClosing, answerUnroutableRpc, registerJsonRpcRoutes, SHUTTING_DOWN_MESSAGE, UNAUTHORIZED_MESSAGE, REQUEST_TOO_LARGE_MESSAGE, type JsonRpcRoutesOptions } from './routes.ts'
export {
  InvalidParamsError,
  JsonRpcError,
  isJsonRpcError,
  RPC_INTERNAL_ERROR,
  RPC_INVALID_PARAMS,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  RPC_UNAUTHORIZED,
  type JsonRpcErrorObject,
} from './errors.ts'
export {
  SPEC_METHOD_ENDPOINTS,
  type JsonRpcCallContext,
  type JsonRpcEndpointName,
  type JsonRpcMethodHandler,
  type MethodTable,
} from './methods.ts'
export {
  createPartnerRegistry,
  MAX_PARTNER_TOKEN_LENGTH,
  MIN_PARTNER_TOKEN_LENGTH,
  PartnerConfigError,
  type PartnerRegistry,
  type PartnerTokenEntry,
} from './partners.ts'
export { jsonRpcLogSerializers, NOT_FOUND_BODY, redactingNotFoundHandler, redactingRequestSerializer, redactRpcUrl } from './log-redaction.ts'
export { DEFAULT_BATCH_CONCURRENCY, DEFAULT_MAX_BATCH_SIZE } from './batch.ts'
export type { JsonRpcId } from './envelope.ts'
