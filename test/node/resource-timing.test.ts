import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { boundResourceTimings } from '../../src/node/resource-timing.ts'

let server: Server
let url: string

beforeAll(async () => {
  server = createServer((_req, res) => res.end('ok'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})

afterAll(async () => {
  // Node's default again, for whatever else runs in this process
  performance.setResourceTimingBufferSize(250)
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

async function fetchTimes(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await (await fetch(url)).text()
  // the buffer-full handling runs in a later turn of the event loop
  await new Promise((resolve) => setImmediate(resolve))
}

describe('boundResourceTimings', () => {
  it("keeps no fetch's timing: none held after more fetches than Node's default buffer (250)", async () => {
    performance.clearResourceTimings()
    await fetchTimes(3)
    // without the bound, every fetch leaves an entry
    expect(performance.getEntriesByType('resource').length).toBe(3)
    boundResourceTimings()
    expect(performance.getEntriesByType('resource').length).toBe(0)
    await fetchTimes(300)
    expect(performance.getEntriesByType('resource').length).toBe(0)
  })
})
