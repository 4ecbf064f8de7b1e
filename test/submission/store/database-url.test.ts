/** DATABASE_URL checks and the description logs show (never the password). */
import { describe, expect, it } from 'vitest'

import { databaseUrlProblem, describeDatabaseUrl } from '../../../src/submission/store/database-url.ts'

describe('databaseUrlProblem', () => {
  it('accepts postgres:// and postgresql:// URLs with a host, or a host parameter', () => {
    expect(databaseUrlProblem('postgres://u:p@db.internal:5433/router')).toBeUndefined()
    expect(databaseUrlProblem('postgresql://127.0.0.1/router?sslmode=require')).toBeUndefined()
    expect(databaseUrlProblem('postgres:///router?host=/var/run/postgresql')).toBeUndefined()
  })

  it('names the problem without repeating the URL', () => {
    for (const url of ['mysql://u:secret@h/db', 'not a url secret', 'postgres:///db?password=secret']) {
      const problem = databaseUrlProblem(url)
      expect(problem).toBeDefined()
      expect(problem).not.toContain('secret')
    }
  })
})

describe('describeDatabaseUrl', () => {
  it('is host:port/database, without user, password or parameters', () => {
    expect(describeDatabaseUrl('postgres://router:secret@db.internal:5433/router?sslmode=require')).toBe('db.internal:5433/router')
    expect(describeDatabaseUrl('postgresql://u:secret@10.0.0.5/x')).toBe('10.0.0.5:5432/x')
  })
})
