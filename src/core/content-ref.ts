/**
 * The format of a content ref (`sha256:<64 lowercase hex>`), the name of every artifact and blob.
 * In core because both the artifact stores (src/artifacts) and the stores' `blobs` sub-port
 * check it, and neither imports the other.
 */
import { ValidationError } from './errors.ts';

const REF_PATTERN = /^sha256:([0-9a-f]{64})$/;

/** The hex digest of `sha256:<hex>`; `ValidationError` on anything else. */
export function parseRef(ref: string): string {
  const match = REF_PATTERN.exec(ref);
  if (!match?.[1]) throw new ValidationError(`artifact ref must be "sha256:" and 64 lowercase hex digits, got ${JSON.stringify(ref)}`);
  return match[1];
}
