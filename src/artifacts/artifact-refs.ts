/** What every artifact store shares: the ref format, the default media type and the typed refusals. */
import { PipelineError, ValidationError } from '../core/errors.ts';

/** Media type recorded when `put` is given none. */
export const DEFAULT_MEDIA_TYPE = 'application/octet-stream';

const REF_PATTERN = /^sha256:([0-9a-f]{64})$/;

/** The hex digest of `sha256:<hex>`; `ValidationError` on anything else. */
export function parseRef(ref: string): string {
  const match = REF_PATTERN.exec(ref);
  if (!match?.[1]) throw new ValidationError(`artifact ref must be "sha256:" and 64 lowercase hex digits, got ${JSON.stringify(ref)}`);
  return match[1];
}

/** The refusal of content over `maxBytes` (413). */
export function tooLarge(maxBytes: number): ValidationError {
  return new ValidationError(`artifact is larger than ${maxBytes} bytes`, { code: 'PAYLOAD_TOO_LARGE', details: { maxBytes } });
}

/** Stored bytes that are not what their ref names. */
export function corrupt(ref: string, why: string): PipelineError {
  return new PipelineError('ARTIFACT_CORRUPT', `artifact ${ref} is corrupt: ${why}`, false, { details: { ref } });
}
