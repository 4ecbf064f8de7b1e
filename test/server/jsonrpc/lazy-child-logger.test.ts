import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { describe, expect, it } from 'vitest'

import { lazyChildLogger } from '../../../src/server/jsonrpc/lazy-child-logger.ts'

/** a real pino logger at `level` whose lines are kept, and how many children it made */
function recordingLogger(level: string): { log: FastifyBaseLogger; lines: () => Array<Record<string, unknown>>; children: () => number } {
  const written: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString())
      done()
    },
  })
  const log = pino({ level }, stream)
  let children = 0
  const child = log.child
  // counts the children of the logger and of its descendants (pino children inherit it)
  log.child = function (this: typeof log, ...args: Parameters<typeof child>) {
    children++
    return child.apply(this, args)
  } as typeof log.child
  return { log, lines: () => written.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>), children: () => children }
}

describe('lazyChildLogger', () => {
  it('makes no child for lines its parent does not write, and writes nothing', () => {
    const r = recordingLogger('warn')
    const log = lazyChildLogger(r.log, { rpcMethod: 'm', partnerId: 'p' })
    log.info({ a: 1 }, 'not written')
    log.debug('not written either')
    log.silent('never')
    expect(r.children()).toBe(0)
    expect(r.lines()).toEqual([])
  })

  it('writes what the eager child writes, with its bindings, making the child once', () => {
    const r = recordingLogger('info')
    const log = lazyChildLogger(r.log, { rpcMethod: 'm', partnerId: 'p' })
    log.info({ hash: '0x01' }, 'first')
    log.warn('second')
    log.error(new Error('boom'), 'third')
    expect(r.children()).toBe(1)
    const lines = r.lines()
    expect(lines.map((l) => [l.msg, l.level, l.rpcMethod, l.partnerId])).toEqual([
      ['first', 30, 'm', 'p'],
      ['second', 40, 'm', 'p'],
      ['third', 50, 'm', 'p'],
    ])
    expect(lines[0].hash).toBe('0x01')
    expect((lines[2].err as { message: string }).message).toBe('boom')
  })

  it('reads and sets the level, and makes grandchildren, through the one child', () => {
    const r = recordingLogger('warn')
    const log = lazyChildLogger(r.log, { rpcMethod: 'm' })
    expect(log.level).toBe('warn')
    log.level = 'debug'
    log.debug('now written')
    log.child({ step: 2 }).debug('grandchild')
    expect(r.log.level).toBe('warn')
    // the child, then the grandchild made from it (pino children inherit the counting child())
    expect(r.children()).toBe(2)
    expect(r.lines().map((l) => [l.msg, l.rpcMethod, l.step])).toEqual([
      ['now written', 'm', undefined],
      ['grandchild', 'm', 2],
    ])
  })
})
