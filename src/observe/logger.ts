/**
 * The process logger: pino writing one JSON object per line, with `pid`, `hostname` and an ISO
 * `time`. It satisfies the core `Logger` port and is a full pino logger, so fastify can take it
 * as its `loggerInstance` and every line of the service shares one format.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { ValidationError } from '../core/errors.ts';

/** A pino logger; assignable to the core `Logger` port. */
export type KilnLogger = PinoLogger;

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`. */
  level: string;
  /** Where lines go. @default stdout */
  destination?: NodeJS.WritableStream;
}

/** Levels pino accepts, `silent` included. */
export const LOG_LEVELS: readonly string[] = [...Object.keys(pino.levels.values), 'silent'];

/** Creates the JSON logger. Throws `ValidationError` for an unknown level (pino's own error is less clear). */
export function createLogger(options: CreateLoggerOptions): KilnLogger {
  if (!LOG_LEVELS.includes(options.level)) {
    throw new ValidationError(`unknown log level ${JSON.stringify(options.level)}; use one of ${LOG_LEVELS.join(', ')}`);
  }
  const settings = {
    level: options.level,
    // ISO time reads in any log viewer without conversion; epoch ms (pino's default) does not.
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  // A Node writable has the `write(string)` pino needs; the cast only narrows the declared type.
  return options.destination ? pino(settings, options.destination as unknown as DestinationStream) : pino(settings);
}
