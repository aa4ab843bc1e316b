/** What every artifact store shares: the ref format, the default media type and the typed refusals. */
import { PipelineError, ValidationError } from '../core/errors.ts';

export { parseRef } from '../core/content-ref.ts';

/** Media type recorded when `put` is given none. */
export const DEFAULT_MEDIA_TYPE = 'application/octet-stream';

/** The refusal of content over `maxBytes` (413). */
export function tooLarge(maxBytes: number): ValidationError {
  return new ValidationError(`artifact is larger than ${maxBytes} bytes`, { code: 'PAYLOAD_TOO_LARGE', details: { maxBytes } });
}

/** Stored bytes that are not what their ref names. */
export function corrupt(ref: string, why: string): PipelineError {
  return new PipelineError('ARTIFACT_CORRUPT', `artifact ${ref} is corrupt: ${why}`, false, { details: { ref } });
}
