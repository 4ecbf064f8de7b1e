/**
 * Folding a submission's event list into its current state. The dispatcher resumes from this
 * after a restart, and a status query can answer "why did it not land" from it.
 */
import type {
  BackrunEvent,
  BundleRole,
  LifecycleEvent,
  ReorgEvent,
  SimulatedEvent,
  TargetingEvent,
  TerminalEvent,
} from './types.ts'

export type LifecycleStage = 'received' | 'simulated' | 'planned' | 'dispatching' | 'included' | 'expired' | 'dropped'

/** Forwarding status of one submission at one relay. */
export interface RelayDeliveryStatus {
  relay: string
  /** Blocks a send was announced for (relay-sending written), ascending. */
  blocks: bigint[]
  /** The newest of `blocks`. */
  lastBlock: bigint
  /**
   * Outcome of the send for `lastBlock`: 'sending' while no result is recorded (in flight, or
   * interrupted by a restart: such a block is not sent again, the next block is). A send under a
   * send horizon (dispatcher/relay-sends.ts) is stored with its result, so a reader of the store
   * sees it only once answered.
   */
  state: 'sending' | 'accepted' | 'failed'
  /** HTTP requests made for `lastBlock` */
  attempts: number
  /** HTTP requests made over all blocks */
  totalAttempts: number
  /** blocks the relay accepted the bundle for */
  acceptedBlocks: number
  /** the newest error message this relay gave, if any */
  lastError?: string
}

export interface LifecycleSummary {
  /** `relay@block@part` of every send announced (relay-sending written) */
  sent: Set<string>
  stage: LifecycleStage
  simulation?: SimulatedEvent
  /** undefined: not decided yet; null: decided, none (see noBackrunReason) */
  backrun: BackrunEvent | null | undefined
  noBackrunReason?: string
  targeting?: TargetingEvent
  relays: Map<string, RelayDeliveryStatus>
  outcome?: TerminalEvent
}

export function emptyLifecycle(): LifecycleSummary {
  return { sent: new Set(), stage: 'received', backrun: undefined, relays: new Map() }
}

/** Key of the (relay, block) pair a send was announced for. */
export function relayBlockKey(relay: string, block: bigint): string {
  return `${relay}@${block}`
}

/**
 * Was a send to `relay` for `block` announced (relay-sending written)? With `part`, a send of that
 * bundle (a record from before bundles were sent apart carried both).
 */
export function wasSent(summary: LifecycleSummary, relay: string, block: bigint, part?: BundleRole): boolean {
  if (part === undefined) {
    const status = summary.relays.get(relay)
    return status !== undefined && status.blocks.includes(block)
  }
  return summary.sent.has(`${relayBlockKey(relay, block)}@${part}`) || summary.sent.has(`${relayBlockKey(relay, block)}@all`)
}

/** The newest block a reorg event leaves standing: what was sent for or included in a block above it was replaced. */
export function reorgFloor(event: Pick<ReorgEvent, 'commonAncestor'>): bigint {
  return event.commonAncestor ?? -1n
}

/**
 * Whether the events end the submission: a terminal event not undone by a later reorg (an
 * inclusion in a replaced block re-opens it).
 */
export function isFinished(events: readonly LifecycleEvent[]): boolean {
  let finished = false
  for (const event of events) {
    if (event.type === 'included' || event.type === 'expired' || event.type === 'dropped') finished = true
    else if (event.type === 'reorg' && event.includedBlock !== undefined) finished = false
  }
  return finished
}

/**
 * Apply one event to `summary` in place. Events after a terminal one change nothing but relay
 * status, except a reorg that replaced the block of the inclusion: the submission is open again.
 */
export function applyLifecycleEvent(summary: LifecycleSummary, event: LifecycleEvent): void {
  const finished = summary.outcome !== undefined
  switch (event.type) {
    case 'received':
      break
    case 'simulated':
      summary.simulation = event
      if (!finished && summary.stage === 'received') summary.stage = 'simulated'
      break
    case 'backrun':
      summary.backrun = event
      summary.noBackrunReason = undefined
      if (!finished && (summary.stage === 'received' || summary.stage === 'simulated')) summary.stage = 'planned'
      break
    case 'no-backrun':
      summary.backrun = null
      summary.noBackrunReason = event.reason
      if (!finished && (summary.stage === 'received' || summary.stage === 'simulated')) summary.stage = 'planned'
      break
    case 'targeting':
      summary.targeting = event
      if (!finished) summary.stage = 'dispatching'
      break
    case 'relay-sending': {
      summary.sent.add(`${relayBlockKey(event.relay, event.block)}@${event.part ?? 'all'}`)
      let status = summary.relays.get(event.relay)
      if (status === undefined) {
        status = { relay: event.relay, blocks: [], lastBlock: event.block, state: 'sending', attempts: 0, totalAttempts: 0, acceptedBlocks: 0 }
        summary.relays.set(event.relay, status)
      }
      if (!status.blocks.includes(event.block)) {
        status.blocks.push(event.block)
        status.blocks.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      }
      if (event.block > status.lastBlock) {
        status.lastBlock = event.block
        status.state = 'sending'
        status.attempts = 0
      } else if (event.block === status.lastBlock && status.state !== 'failed') {
        // the second bundle of the same block (the backrun bundle after the user's own)
        status.state = 'sending'
      }
      if (!finished && summary.stage !== 'dispatching') summary.stage = 'dispatching'
      break
    }
    case 'relay-result': {
      const status = summary.relays.get(event.relay)
      if (status === undefined) break // a result without its announcement: nothing to attach it to
      status.totalAttempts += event.attempts
      // a block counts once, on its first (the user's) bundle
      if (event.ok && event.part !== 'backrun') status.acceptedBlocks += 1
      if (event.lastError !== undefined) status.lastError = event.lastError
      if (event.block === status.lastBlock) {
        // both bundles of a block: accepted only when each was
        status.state = !event.ok || status.state === 'failed' ? 'failed' : 'accepted'
        status.attempts += event.attempts
      }
      break
    }
    case 'bundle-outcome':
      break
    case 'reorg': {
      // what was sent for a replaced block may be sent again (planned on the new head); relay
      // statuses keep the history of what was sent
      const floor = reorgFloor(event)
      for (const key of [...summary.sent]) if (sentKeyBlock(key) > floor) summary.sent.delete(key)
      if (event.includedBlock !== undefined && summary.outcome?.type === 'included' && summary.outcome.block > floor) {
        summary.outcome = undefined
        summary.stage = summary.targeting === undefined ? 'received' : 'dispatching'
      }
      break
    }
    case 'included':
    case 'expired':
    case 'dropped':
      if (!finished) {
        summary.outcome = event
        summary.stage = event.type
      }
      break
  }
}

/** The block of a `relay@block@part` key of `LifecycleSummary.sent` (a relay name may hold '@'). */
export function sentKeyBlock(key: string): bigint {
  const parts = key.split('@')
  return BigInt(parts[parts.length - 2])
}

export function summarizeLifecycle(events: readonly LifecycleEvent[]): LifecycleSummary {
  const summary = emptyLifecycle()
  for (const event of events) applyLifecycleEvent(summary, event)
  return summary
}
