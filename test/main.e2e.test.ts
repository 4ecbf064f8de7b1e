/**
 * src/main.ts as `npm start` runs it: signals. A supervisor (or bench:submit) may send SIGTERM again
 * while the service is closing; the second one must not kill it before it has closed.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from './support/net.ts'
import { startServiceProcess } from './support/service-process.ts'
import { until } from './support/waiting.ts'

describe('src/main.ts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'main-signals-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('a second SIGTERM while shutting down is logged and ignored: the service still closes and exits 0', async () => {
    const logPath = join(dir, 'service.log')
    const logFd = openSync(logPath, 'w')
    const port = await freePort()
    const service = await startServiceProcess(port, { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info', LOCAL_BUILDER_PORT: '0' }, undefined, logFd)
    closeSync(logFd)
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => service.once('exit', (code, signal) => resolve({ code, signal })))
    const messages = () => readFileSync(logPath, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { msg: string }).msg)
    // An idle service closes in well under 100 ms, before a second signal could reach it: a request
    // whose body is still arriving holds the close open (the HTTP server waits for its connection)
    // until the test sends the rest.
    const body = JSON.stringify({ tokenIn: '0x7fD2f008b0Ca3D4CcaF6B88aB8370314CD45A972', tokenOut: '0x390Fc41D31554d120bC63D41b1389b832D774089', amountIn: '1000' })
    const socket = connect(port, '127.0.0.1')
    const answered = new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()))
      socket.on('close', () => resolve(text))
    })
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.write(`POST /v1/quote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nx-api-key: dev-insecure-key\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`)
    try {
      await until('the request is being received', async () => (messages().includes('incoming request') ? undefined : true), 1_000).catch(() => true)
      service.kill('SIGTERM')
      await until('the service is shutting down', async () => (messages().includes('shutting down') ? true : undefined), 10_000)
      expect(service.exitCode).toBe(null)
      service.kill('SIGTERM')
      await until('the second signal is logged', async () => (messages().includes('already shutting down; signal ignored') ? true : undefined), 10_000)
      expect(service.exitCode).toBe(null)
      // the rest of the body; the closing server may answer it or drop the connection
      socket.end(body.slice(5))
      await answered
      const { code, signal } = await exited
      expect({ code, signal }).toEqual({ code: 0, signal: null })
    } finally {
      socket.destroy()
      if (service.exitCode === null && service.signalCode === null) service.kill('SIGKILL')
    }
  })
})
