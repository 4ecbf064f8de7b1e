/**
 * Gives back the memory a thread's module-loader isolate kept from loading the module graph: call
 * it once the thread has imported everything it runs (the main thread after startNode; each of the
 * pool's workers once it has warmed up, worker-entry.ts). See loader-gc-hook.mjs for why and how.
 *
 * Only where a loader isolate exists: registering a hook in a thread without one would start one.
 * Under Node 20 a thread that runs TypeScript has one (tsx's hooks: `--import tsx`, the tsx CLI, or
 * the worker bootstrap's register()); the caller says whether that is the case.
 */
import { register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'

export interface LoaderCollection {
  /** the loader isolate's committed V8 heap before and after the collection, MB */
  committedBeforeMb: number
  committedAfterMb: number
}

/**
 * Runs the collection in this thread's loader isolate (register() blocks until the hook's
 * initialize has run) and resolves with what it measured; resolves undefined when the answer
 * does not come within `timeoutMs` (it never rejects: this is housekeeping).
 */
export function collectLoaderIsolateGarbage(timeoutMs = 2_000): Promise<LoaderCollection | undefined> {
  const { port1, port2 } = new MessageChannel()
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), timeoutMs)
    const finish = (result: LoaderCollection | undefined) => {
      clearTimeout(timer)
      port1.close()
      resolve(result)
    }
    port1.once('message', (message: LoaderCollection) => finish(message))
    try {
      register('./loader-gc-hook.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] })
    } catch {
      finish(undefined)
    }
  })
}

/**
 * Whether this process loads TypeScript through tsx's loader hooks, as its node arguments say:
 * `--import tsx` (npm start) or the tsx CLI's `--import file:///…/tsx/dist/loader.mjs`.
 */
export function runsUnderTsxLoader(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const args = [...execArgv, ...nodeOptions.split(/\s+/)]
  return args.some((arg) => /^(--import=)?tsx(\/|$)|[/\\]tsx[/\\]dist[/\\]/.test(arg))
}
