/**
 * The process logger: pino writing one JSON object per line, with `pid`, `hostname` and an ISO
 * `time`; on a terminal (or with format `pretty`) the same lines made readable by pino-pretty.
 * It satisfies the core `Logger` port and is a full pino logger, so fastify can take it as its
 * `loggerInstance` and every line of the service shares one format.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import PinoPretty from 'pino-pretty';
import { LogFormat } from '../config/schema.ts';
import { ValidationError } from '../core/errors.ts';

/** A pino logger; assignable to the core `Logger` port. */
export type KilnLogger = PinoLogger;

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`. */
  level: string;
  /** Where lines go. @default stdout */
  destination?: NodeJS.WritableStream;
  /** `json`, `pretty`, or `auto`: pretty when `destination` is a terminal. @default auto */
  format?: LogFormat;
}

/** Levels pino accepts, `silent` included. */
export const LOG_LEVELS: readonly string[] = [...Object.keys(pino.levels.values), 'silent'];

/** True when `stream` is a terminal (a person reads it). */
function isTerminal(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** Creates the logger. Throws `ValidationError` for an unknown level (pino's own error is less clear). */
export function createLogger(options: CreateLoggerOptions): KilnLogger {
  if (!LOG_LEVELS.includes(options.level)) {
    throw new ValidationError(`unknown log level ${JSON.stringify(options.level)}; use one of ${LOG_LEVELS.join(', ')}`);
  }
  const settings = {
    level: options.level,
    // ISO time reads in any log viewer without conversion; epoch ms (pino's default) does not.
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const format = options.format ?? LogFormat.auto;
  const destination = options.destination ?? process.stdout;
  if (format === LogFormat.pretty || (format === LogFormat.auto && isTerminal(destination))) {
    const pretty = PinoPretty({
      destination,
      // Synchronous, like the JSON lines: a line logged just before exit is not lost.
      sync: true,
      colorize: isTerminal(destination),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
    });
    return pino(settings, pretty);
  }
  // A Node writable has the `write(string)` pino needs; the cast only narrows the declared type.
  return options.destination ? pino(settings, options.destination as unknown as DestinationStream) : pino(settings);
}
