/**
 * The service's one logger, created before anything else so the domain (head polling, the local
 * builder, the dispatcher) and the HTTP server (Fastify's `loggerInstance`) write to the same pino
 * instance from the first line. Its options (level, the serializers and redaction that keep
 * secrets out of the log) are the HTTP app's own, so a request logs the same whoever created the
 * logger.
 *
 * pino is Fastify's logger; it is imported here directly.
 */
import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from '../config.ts'
import { serviceLoggerOptions } from '../server/app.ts'

export type ServiceLogger = Logger

/** `destination`: where the lines go; default stdout, as Fastify's own logger */
export function createServiceLogger(level: LogLevel, destination?: DestinationStream): ServiceLogger {
  return pino(serviceLoggerOptions(level), destination)
}
