/** Loopback helpers for the benchmark scripts. */
import { createServer } from 'node:net'

/** a port free on 127.0.0.1 right now (bound and released) */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address !== 'object') throw new Error('no port')
  return address.port
}
