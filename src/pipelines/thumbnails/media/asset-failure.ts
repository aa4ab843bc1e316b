/**
 * The permanent failures of the media toolkit. A bad asset will be just as bad on the next
 * attempt, so every one of these is a `StageFailure.permanent`: never retried (the run ends
 * `failed` with this code), and, as a permanent error, eligible for the negative cache.
 */
import { StageFailure, type ErrorCode } from '../../../index.ts';

/** Codes of the asset failures raised by this toolkit. */
export type AssetFailureCode = Extract<
  ErrorCode,
  | 'ASSET_UNSUPPORTED_FORMAT'
  | 'ASSET_UNREADABLE'
  | 'ASSET_TOO_LARGE'
  | 'ASSET_TOO_MANY_PIXELS'
  | 'ASSET_TOO_COMPLEX'
  | 'ASSET_TYPE_MISMATCH'
  | 'ASSET_IMPORT_FORBIDDEN'
  | 'ASSET_IMPORT_NOT_FOUND'
>;

/** A permanent {@link StageFailure} with an asset code, machine-readable details and an optional cause. */
export function assetFailure(code: AssetFailureCode, message: string, details: Record<string, unknown> = {}, cause?: unknown): StageFailure {
  return StageFailure.permanent(message, { code, details, ...(cause === undefined ? {} : { cause }) });
}
