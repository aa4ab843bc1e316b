/**
 * Command-line flags of the QR benchmark (`npm run bench -- qr [flags]`).
 */
import { parseArgs } from 'node:util';
import { LogLevel } from '../../src/config/schema.ts';
import { positiveInt } from '../engine/engine-args.ts';

/** Flags of one QR benchmark invocation. */
export interface QrArgs {
  /** autocannon connections of every HTTP phase. @default 32 */
  connections: number;
  /** Measured seconds of every HTTP phase. @default 10 */
  durationS: number;
  /** Untimed seconds of load before every measured HTTP phase. @default 3 */
  warmupS: number;
  /** `--log-level` of the `kiln serve` child. @default 'warn' (no per-request lines) */
  logLevel: LogLevel;
  /** Profile the `kiln serve` child during the uncached phase and print its hotspots. */
  cpuProf: boolean;
}

const DEFAULT_CONNECTIONS = 32;
const DEFAULT_DURATION_S = 10;
const DEFAULT_WARMUP_S = 3;

function isLogLevel(raw: string): raw is LogLevel {
  return (Object.values(LogLevel) as string[]).includes(raw);
}

/** Parses `[--connections 32] [--duration 10] [--warmup 3] [--log-level warn] [--cpu-prof]`; unknown flags are errors. */
export function parseQrArgs(argv: readonly string[]): QrArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      connections: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'log-level': { type: 'string' },
      'cpu-prof': { type: 'boolean' },
    },
  });
  const logLevel = values['log-level'] ?? LogLevel.warn;
  if (!isLogLevel(logLevel)) throw new Error(`--log-level must be one of ${Object.values(LogLevel).join(', ')}, got "${logLevel}"`);
  return {
    connections: positiveInt('connections', values.connections, DEFAULT_CONNECTIONS),
    durationS: positiveInt('duration', values.duration, DEFAULT_DURATION_S),
    warmupS: positiveInt('warmup', values.warmup, DEFAULT_WARMUP_S),
    logLevel,
    cpuProf: values['cpu-prof'] ?? false,
  };
}
