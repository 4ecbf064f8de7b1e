/**
 * src/main.ts as `npm start` runs it: signals. A supervisor (or bench:submit) may send SIGTERM again
 * while the service is closing; the second one must not kill it before it has closed.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
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
    try {
      service.kill('SIGTERM')
      await until('the service is shutting down', async () => (messages().includes('shutting down') ? true : undefined), 10_000)
      // the test means nothing if the close already ended
      expect(service.exitCode).toBe(null)
      service.kill('SIGTERM')
      const { code, signal } = await exited
      expect({ code, signal }).toEqual({ code: 0, signal: null })
      expect(messages()).toContain('already shutting down; signal ignored')
    } finally {
      if (service.exitCode === null && service.signalCode === null) service.kill('SIGKILL')
    }
  })
})
