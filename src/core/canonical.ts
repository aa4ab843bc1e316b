/**
 * Canonical JSON (RFC 8785, JCS) and content hashes. Identical content, whatever its key order or
 * number spelling, hashes to the same checksum.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { ValidationError } from './errors.ts';

/** The RFC 8785 canonical form of a JSON value. Throws `ValidationError` for non-JSON values. */
export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new ValidationError('value cannot be represented as JSON');
  return out;
}

/** sha256 hex of a string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** sha256 hex of a value's canonical JSON. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
