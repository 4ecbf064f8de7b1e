/**
 * The shape of the .cpuprofile files V8 writes under --cpu-prof (the fields the scripts read), for
 * scripts/profile-quote.ts and scripts/probe/main-thread-cost.ts.
 */
export interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

export interface CpuProfile {
  nodes: ProfileNode[]
  /** µs on the process's monotonic clock */
  startTime: number
  /** node id of each sample */
  samples: number[]
  /** µs before each sample */
  timeDeltas: number[]
}
