/**
 * The errors of the memory store at its edge. It has no driver, so there is nothing to translate:
 * its operations throw kiln errors on purpose (`NotFoundError`, `ConflictError`,
 * `ValidationError`, ...), and a closed store refuses every call with {@link closedStoreError}.
 */
import { StoreUnavailableError } from '../../core/errors.ts';

/** What every call of a closed memory store fails with, as for every store. */
export function closedStoreError(): StoreUnavailableError {
  return new StoreUnavailableError('memory store is closed');
}

/**
 * What an operation's throw becomes for the caller: itself. Kiln errors are the store's answers;
 * anything else is a bug, or a caller value that `structuredClone` cannot copy, and reaches the
 * caller unchanged so its stack still points at the cause.
 */
export function mapError(err: unknown): unknown {
  return err;
}
