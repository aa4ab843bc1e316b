/**
 * Injected latency, for fault tests: a Store or an ArtifactStore whose every call waits a given
 * time before it is made (a slow disk, a slow or distant database). The wait is read per call
 * from a {@link Latency}, so a test can switch it on and off while kiln runs; a process gets it
 * from the test-hook environment variables {@link STORE_LATENCY_ENV} and
 * {@link ARTIFACT_LATENCY_ENV}, read once by the CLI's wiring (src/cli/runtime.ts).
 *
 * Only the calls are slowed: `capabilities`, `onWake` and `close` of a store pass straight through
 * (a store that cannot be closed would only slow the test down). The call itself is made after
 * the wait, as a slow network delivers a request late; its caller's deadlines (request deadline,
 * lease, stage timeout) run meanwhile.
 */
import { systemClock, type Clock } from '../core/clock.ts';
import { ConfigError } from '../core/errors.ts';
import type { ArtifactStore } from '../core/ports/artifact-store.ts';
import type { Store } from '../core/ports/store.ts';

/** Test hook: every store call of the process waits this many ms first. */
export const STORE_LATENCY_ENV = 'KILN_FAULT_STORE_LATENCY_MS';
/** Test hook: every artifact store call of the process waits this many ms first. */
export const ARTIFACT_LATENCY_ENV = 'KILN_FAULT_ARTIFACT_LATENCY_MS';

/** The wait added to each call, in ms; 0 adds none (not even a tick). Mutable. */
export interface Latency {
  ms: number;
}

/** Store members that are not slowed. */
const STORE_PASS_THROUGH = new Set<PropertyKey>(['capabilities', 'onWake', 'close']);
/** Artifact store members that return async iterables (slowed before the first item). */
const ITERATING = new Set<PropertyKey>(['list', 'listTemps']);

const waitFor = async (latency: Latency, clock: Clock): Promise<void> => {
  if (latency.ms > 0) await clock.sleep(latency.ms);
};

function slowCall<A extends unknown[], R>(fn: (...args: A) => Promise<R>, latency: Latency, clock: Clock): (...args: A) => Promise<R> {
  return async (...args) => {
    await waitFor(latency, clock);
    return fn(...args);
  };
}

function slowIteration<A extends unknown[], T>(fn: (...args: A) => AsyncIterable<T>, latency: Latency, clock: Clock): (...args: A) => AsyncIterable<T> {
  return async function* (...args) {
    await waitFor(latency, clock);
    yield* fn(...args);
  };
}

/** A view of `target` whose methods (but `skip`) are slowed; wrapped methods are made once. */
function slowed<T extends object>(target: T, wrap: (name: PropertyKey, fn: (...args: unknown[]) => unknown) => unknown, skip: ReadonlySet<PropertyKey> = new Set()): T {
  const made = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(obj, name) {
      const value: unknown = Reflect.get(obj, name, obj);
      if (typeof value !== 'function' || skip.has(name)) return value;
      if (!made.has(name)) made.set(name, wrap(name, (value as (...args: unknown[]) => unknown).bind(obj)));
      return made.get(name);
    },
  });
}

/** `store` with `latency` added to every port call and to `migrate`, `schemaVersion` and `now`. */
export function withStoreLatency<S extends Store>(store: S, latency: Latency, clock: Clock = systemClock): S {
  const slowFn = (_name: PropertyKey, fn: (...args: unknown[]) => unknown): unknown => slowCall(fn as (...args: unknown[]) => Promise<unknown>, latency, clock);
  const made = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(obj, name) {
      const value: unknown = Reflect.get(obj, name, obj);
      if (STORE_PASS_THROUGH.has(name)) return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(obj) : value;
      if (typeof value !== 'function' && (typeof value !== 'object' || value === null)) return value;
      if (!made.has(name)) {
        // A method of the store, or a port whose every method is slowed.
        made.set(name, typeof value === 'function' ? slowFn(name, (value as (...args: unknown[]) => unknown).bind(obj)) : slowed(value, slowFn));
      }
      return made.get(name);
    },
  });
}

/** `artifacts` with `latency` added to every call (listings wait before their first item). */
export function withArtifactLatency<A extends ArtifactStore>(artifacts: A, latency: Latency, clock: Clock = systemClock): A {
  return slowed(artifacts, (name, fn) =>
    ITERATING.has(name)
      ? slowIteration(fn as (...args: unknown[]) => AsyncIterable<unknown>, latency, clock)
      : slowCall(fn as (...args: unknown[]) => Promise<unknown>, latency, clock),
  );
}

/**
 * The latency a test-hook variable asks for: undefined when unset or empty, else a whole number
 * of ms (a `ConfigError` otherwise).
 */
export function latencyFromEnv(env: Readonly<Record<string, string | undefined>>, name: string): Latency | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new ConfigError([{ source: 'env', path: name, message: `must be a whole number of milliseconds, got ${JSON.stringify(raw)}` }]);
  return { ms };
}
