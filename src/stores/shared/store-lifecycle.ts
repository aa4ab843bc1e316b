/**
 * The checks every public method of a networked store goes through (PostgreSQL, Redis): refused
 * after `close()`, refused until the schema (or key layout) is current — checked once, then
 * remembered — and whatever it throws passed through the store's `mapError`, so no driver error
 * escapes. Pure TypeScript with no driver import.
 */
import type { PipelineError } from '../../core/errors.ts';

/** A method of a port: arguments in, a promise out. */
export type PortMethod<Args extends unknown[], Result> = (...args: Args) => Promise<Result>;

/** What a store supplies: how to check its schema, its error mapping, its closed error. */
export interface StoreLifecycleDeps {
  /** Resolves when the schema is current; throws `SchemaVersionError` (older or newer) otherwise. */
  checkSchema(): Promise<void>;
  mapError(err: unknown): PipelineError;
  closedError(): Error;
}

/** The lifecycle of one store instance. */
export interface StoreLifecycle {
  /**
   * Wraps one public method: the closed error after `close()`, `SchemaVersionError` until the
   * schema is current (unless `needsSchema` is false: migrate, schemaVersion, now), and whatever
   * it throws passed through `mapError`.
   */
  guard<Args extends unknown[], Result>(body: PortMethod<Args, Result>, needsSchema?: boolean): PortMethod<Args, Result>;
  /** A sub-port: every method of `methods` wrapped by {@link StoreLifecycle.guard}. */
  port<Port extends object>(methods: Port): Port;
  /** Records that `migrate()` brought the schema up to date: calls stop checking it. */
  schemaMigrated(): void;
  /** Marks the store closed (every later call is refused); false when it already was. */
  markClosed(): boolean;
}

/** Creates the lifecycle of one store instance. */
export function createStoreLifecycle(deps: StoreLifecycleDeps): StoreLifecycle {
  let closed = false;
  let schemaCurrent = false;
  const guard = <Args extends unknown[], Result>(body: PortMethod<Args, Result>, needsSchema = true): PortMethod<Args, Result> => {
    return async (...args: Args): Promise<Result> => {
      if (closed) throw deps.closedError();
      try {
        if (needsSchema && !schemaCurrent) {
          await deps.checkSchema();
          schemaCurrent = true;
        }
        return await body(...args);
      } catch (err) {
        throw deps.mapError(err);
      }
    };
  };
  return {
    guard,
    port: <Port extends object>(methods: Port): Port =>
      Object.fromEntries(Object.entries(methods).map(([name, method]) => [name, guard(method as PortMethod<unknown[], unknown>)])) as Port,
    schemaMigrated: () => {
      schemaCurrent = true;
    },
    markClosed: () => {
      const wasOpen = !closed;
      closed = true;
      return wasOpen;
    },
  };
}
