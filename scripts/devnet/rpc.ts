/**
 * A JSON-RPC batch call for scripts and tests talking to anvil: reading a dozen balances at two
 * blocks is one HTTP round trip instead of fifty.
 */

export interface RpcCall {
  method: string
  params: unknown[]
}

export async function rpcBatch<T = unknown>(url: string, calls: readonly RpcCall[]): Promise<T[]> {
  if (calls.length === 0) return []
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }))),
    signal: AbortSignal.timeout(30_000),
  })
  const bodies = (await res.json()) as { id: number; result?: T; error?: { code: number; message: string } }[]
  const out = new Array<T>(calls.length)
  for (const body of bodies) {
    if (body.error) throw new Error(`${calls[body.id]?.method}: ${body.error.code} ${body.error.message}`)
    out[body.id] = body.result as T
  }
  return out
}
