/**
 * Private submission with committed delivery: the public face of src/submission.
 *
 * Wiring (for the composition root and the JSON-RPC handlers):
 *
 * ```ts
 * const store = new OutboxStore(config.dataDir, { maxOpen, retention: { maxFinished, finishedTtlMs } })
 * await store.open()                                   // PersistenceError: refuse to start
 * const key = SearcherKey.fromHex(env.SEARCHER_PRIVATE_KEY)   // never log env; the key redacts itself
 * const { relays, problems } = parseRelayEndpoints(env.RELAYS) // JSON array; report problems in ConfigError
 * const dispatcher = new Dispatcher({
 *   store, relays: relays.map((r) => new RelayClient(r, key)),
 *   heads: { onNewHead: (l) => chain.onNewHead(l), currentHead: () => chain.latest().block },
 *   inclusion, planner, simulate,                      // implemented with the simulator and the backrun engine
 *   decode: { chainId: chain.chainId, hardfork: config.hardfork },
 *   expiryBlocks, log,
 * })
 * await dispatcher.start()                             // resumes everything undelivered
 *
 * // eth_sendPrivateRawTransaction handler, after decodeSignedTransaction(params.tx) (TxDecodeError -> -32000):
 * const { record } = await dispatcher.accept({ kind: 'private-tx', partnerId: ctx.partnerId, rawTx: decoded.rawHex })
 * return record.hash                                   // PersistenceError / OutboxFullError -> -32603, no hash
 * // eth_sendBundle: { kind: 'bundle', rawTxs, options }; returns the bundle hash
 * // eth_notifyRawTransaction: { kind: 'notify', rawTx }; a PersistenceError drops the notification (-32603)
 *
 * // shutdown: await dispatcher.stop(); await store.close()
 * ```
 */
export { fullJitterDelay, sleep, type BackoffPolicy } from './backoff.ts'
export {
  Dispatcher,
  type BackrunPlan,
  type BackrunPlanInput,
  type BackrunPlanner,
  type DispatcherLogger,
  type DispatcherOptions,
  type DispatcherStats,
  type HeadInfo,
  type HeadReorg,
  type HeadSource,
  type InclusionChecker,
  type InclusionQuery,
  type InclusionStatus,
  type SimulationInput,
  type SimulationReport,
  type SubmissionOutbox,
  type SubmissionSimulator,
} from './dispatcher.ts'
export {
  OutboxFullError,
  PersistenceError,
  RelayError,
  isPersistenceError,
  LeaseLostError,
  isLeaseLostError,
  isRelayError,
  type RelayErrorDetails,
  type RelayErrorParams,
  type RelayErrorReason,
} from './errors.ts'
export {
  applyLifecycleEvent,
  emptyLifecycle,
  summarizeLifecycle,
  wasSent,
  type LifecycleStage,
  type LifecycleSummary,
  type RelayDeliveryStatus,
} from './lifecycle.ts'
export { OutboxStore, type OutboxRetention, type OutboxStats, type OutboxStoreOptions, type PersistResult } from './outbox-store.ts'
export {
  FLASHBOTS_SIGNATURE_HEADER,
  RelayClient,
  encodeSendBundleRequest,
  flashbotsSignature,
  parseRelayEndpoints,
  relayEndpointProblems,
  type BundleRelay,
  type HashReferenceStyle,
  type RelayBundle,
  type RelayBundleEntry,
  type RelayClientOptions,
  type RelayEndpoint,
  type RelaySendOptions,
  type RelaySendResult,
} from './relay-client.ts'
export { SearcherKey } from './searcher-key.ts'
export {
  SUBMISSION_KINDS,
  isTerminalEvent,
  submissionId,
  type BackrunEvent,
  type BundleOptions,
  type DroppedEvent,
  type ExpiredEvent,
  type IncludedEvent,
  type LifecycleEvent,
  type NewSubmission,
  type NoBackrunEvent,
  type ReceivedEvent,
  type RelayResultEvent,
  type RelaySendingEvent,
  type SimulatedEvent,
  type StoredSubmission,
  type SubmissionId,
  type SubmissionKind,
  type SubmissionRecord,
  type TargetingEvent,
  type TerminalEvent,
} from './types.ts'
