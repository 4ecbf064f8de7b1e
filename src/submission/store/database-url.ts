/**
 * DATABASE_URL, the PostgreSQL submission store's connection string: checked at configuration
 * time and described for logs. Without the driver, so the configuration can check it without
 * loading pg. The URL may hold a password: nothing here repeats it.
 */

/**
 * Check a DATABASE_URL: a postgres:// or postgresql:// URL with a host (or a `host` parameter, e.g. a
 * Unix socket directory).
 * @returns the problem, or undefined when it is usable (never repeats the URL: it may hold a password)
 */
export function databaseUrlProblem(url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'must be a postgres:// or postgresql:// URL'
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') return 'must be a postgres:// or postgresql:// URL'
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return 'must name a host'
  return undefined
}

/** `host:port/database` of a DATABASE_URL, for logs: no user, no password, no parameters. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port === '' ? '5432' : parsed.port}${parsed.pathname === '' ? '/' : parsed.pathname}`
  } catch {
    return '(unparsable url)'
  }
}
