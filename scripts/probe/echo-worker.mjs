/**
 * The worker of scripts/probe/bare-quote-floor.ts: answers a quote request with the service's own
 * answer for its token pair (given in workerData), computing nothing. Plain JavaScript, so the
 * thread loads no TypeScript hooks (the cheapest worker there is).
 */
import { workerData } from 'node:worker_threads'

/** token pair -> the service's answer for it */
const answers = new Map(workerData.map((a) => [`${a.tokenIn}-${a.tokenOut}`, a.answer]))

export default function echo(request) {
  const answer = answers.get(`${request.tokenIn}-${request.tokenOut}`)
  if (answer === undefined) throw new Error(`no answer for ${request.tokenIn} -> ${request.tokenOut}`)
  return answer
}
