/**
 * The environment of a service a test starts in this process. loadConfig and startNode read only
 * the object they are given, never process.env, so without this `WORKERS=1 npm test` would still
 * run such services with the default (one worker per core). A test that sets WORKERS itself keeps
 * its value; a service started as a child process inherits process.env anyway
 * (test/support/service-process.ts).
 */
type Env = Readonly<Record<string, string | undefined>>

export function withWorkersFromEnv<E extends Env>(env: E): E {
  const workers = process.env.WORKERS
  if (workers === undefined || 'WORKERS' in env) return env
  return { ...env, WORKERS: workers }
}
