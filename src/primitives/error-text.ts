/**
 * Error text for messages and logs, shared so every component words a failure the same way.
 */

/** Longest excerpt of a foreign text (a response body, a node's error message) put in a message. */
export const MAX_EXCERPT = 200

/**
 * The message of `error`, followed by what its cause says in parentheses: a system error's code
 * when the cause has one (fetch's `fetch failed (ECONNREFUSED)`: no address, since relay errors
 * reach partners' status answers), else the cause's message. `fetch failed` alone says nothing.
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause as { message?: unknown; code?: unknown } | null | undefined
  if (cause === null || typeof cause !== 'object') return error.message
  if (typeof cause.code === 'string' && cause.code !== '') return `${error.message} (${cause.code})`
  if (cause instanceof Error && cause.message !== '') return `${error.message} (${cause.message})`
  return error.message
}

/** `text` on one line (runs of whitespace become one space), cut at `max` characters with an ellipsis. */
export function clip(text: string, max = MAX_EXCERPT): string {
  const oneLine = text.replace(/\s+/g, ' ').trim()
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max)}…`
}
