/**
 * The bench:quote mix quoted in this process, one quote at a time, for the probes that measure what
 * an isolate does per quote (scripts/probe/isolate-gc-cost.ts, scripts/probe/heap-reduce-gain.ts):
 * the quote service on the embedded devnet with no worker pool (`WORKERS=0`) and no answer cache,
 * each quote a distinct amount so none is answered from a memo.
 */
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices } from '../../src/node/domain.ts'
import { QUOTE_MIX } from '../../test/support/quote-mix.ts'

export interface InProcessQuoter {
  /** quotes the mix's next pair at a new amount */
  next(): Promise<void>
  close(): Promise<void>
}

export async function openInProcessQuoter(): Promise<InProcessQuoter> {
  const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0' }), { log: { warn: () => {} } })
  let n = 0
  return {
    async next() {
      const m = QUOTE_MIX[n % QUOTE_MIX.length]!
      n++
      await domain.quote.quote({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: m.amountIn + BigInt(n) })
    },
    close: () => domain.close(),
  }
}
