/**
 * Rules every route shares, in one place so the core routes and pipelines' routes agree:
 * how an integer is written in a query string, and what an Idempotency-Key may be.
 */
import { ValidationError } from '../core/errors.ts';

/** A query-string integer: plain decimal digits without leading zeros, an optional minus sign, nothing else. */
const DECIMAL_INTEGER = /^(?:0|-?[1-9][0-9]*)$/;

/**
 * The one integer parser for query strings (core routes and pipelines' routes): `"42"` is 42;
 * `"2.5"`, `"1e2"`, `"0x10"`, `" 5"`, `"007"`, `""` and anything beyond ±(2^53 - 1) are not
 * integers (undefined), never truncated or rounded.
 */
export function parseQueryInteger(text: string): number | undefined {
  if (!DECIMAL_INTEGER.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Message of a query-string value {@link parseQueryInteger} refuses. */
export const QUERY_INTEGER_MESSAGE = 'must be a decimal integer (digits only, no leading zeros, at most 2^53 - 1)';

/** Longest Idempotency-Key, in characters. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** Printable ASCII only: the key is echoed in logs and compared byte for byte. */
const IDEMPOTENCY_KEY = new RegExp(`^[\\x20-\\x7E]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

/** What an Idempotency-Key may be, as said in every refusal. */
export const IDEMPOTENCY_KEY_RULE = `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`;

/**
 * The request's Idempotency-Key, or undefined when it has none; a key breaking the rule is 400
 * VALIDATION_FAILED naming `headers.idempotency-key`.
 */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw new ValidationError(`headers.idempotency-key: ${IDEMPOTENCY_KEY_RULE}`, { details: { issues: [{ field: 'headers.idempotency-key', message: IDEMPOTENCY_KEY_RULE }] } });
  }
  return key;
}
