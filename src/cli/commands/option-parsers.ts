/** Parsers of option values shared by several commands. Bad values throw `ValidationError`. */
import { parseDurationMs } from '../../config/duration.ts';
import { ValidationError } from '../../core/errors.ts';

/** `--port`: an integer; range checks are the config schema's job (it names the flag). */
export function parsePort(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new ValidationError(`--port must be an integer, got "${raw}"`);
  return Number(raw);
}

/** A positive integer option such as `--limit` or `--wait`. */
export function parsePositiveInt(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ValidationError(`expected a positive integer, got "${raw}"`);
  return Number(raw);
}

/** `--queues a,b`: a comma-separated list. */
export function parseList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A JSON argument such as `submit`'s input. */
export function parseJsonArgument(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new ValidationError(`${what} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, { code: 'INVALID_JSON' });
  }
}

/** A duration option: integer ms or a number with a unit (`500ms`, `30s`, `1h`). */
export function parseDurationOption(raw: string): number {
  const ms = parseDurationMs(/^\d+$/.test(raw) ? Number(raw) : raw);
  if (ms === undefined) throw new ValidationError(`expected a duration such as 500ms, 30s or 1h, got ${JSON.stringify(raw)}`);
  return ms;
}
