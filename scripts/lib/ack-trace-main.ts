/**
 * The service's entry under bench:submit's BENCH_ACK_TRACE: the acknowledgement probe
 * (ack-trace-probe.ts) first, then src/main.ts as `npm start` runs it.
 */
import './ack-trace-probe.ts'
await import('../../src/main.ts')
