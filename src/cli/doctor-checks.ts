/**
 * The checks of `kiln doctor`: can this host reach the store, is its schema the one this code
 * expects, does this host's clock agree with the store's, and (for a store on a server that has
 * settings of its own, Redis) are the server's settings safe. Read-only: nothing is migrated or
 * written. Each check says what it found and, unless it is ok, what to do about it.
 */
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { Store } from '../core/ports/store.ts';
import { StoreKind, type ResolvedStore } from '../config/schema.ts';
import { redactSecrets, storeUrl } from '../config/store-url.ts';
import { formatDurationMs } from './text-output.ts';

/** Outcome of one check. `skip`: it could not run (an earlier check failed) or does not apply. */
export const CheckStatus = { ok: 'ok', warn: 'warn', fail: 'fail', skip: 'skip' } as const;
/** One of {@link CheckStatus}'s values. */
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];

/** One row of the doctor's report. */
export interface DoctorCheck {
  /** `connectivity`, `schema`, `clock skew`, or one of a store's {@link ServerChecks}. */
  name: string;
  status: CheckStatus;
  /** What was found, e.g. `connected in 12 ms`. */
  result: string;
  /** What to do; null when the status is ok or skip. */
  action: string | null;
}

/** Checks of a store's server settings (Redis: version, persistence, eviction), run once it answers. */
export interface ServerChecks {
  /** The names of the rows `run` returns, for the skipped rows of an unreachable store. */
  names: readonly string[];
  /** Reads the settings and judges them; may throw (then every row says it could not tell). */
  run(): Promise<DoctorCheck[]>;
}

/** Options of {@link runDoctorChecks}. */
export interface DoctorOptions {
  /** The store being checked: decides the wording and whether it has a clock of its own. */
  store: ResolvedStore;
  /** This host's clock. @default systemClock */
  hostClock?: Clock;
  /** Bound on opening plus the first round trip, and on each later call. @default 5000 */
  timeoutMs?: number;
  /** The store's server checks, after the others; none when absent. */
  serverChecks?: ServerChecks;
}

/** A first round trip slower than this is a warning: every claim and commit pays a round trip. */
export const SLOW_CONNECT_MS = 1_000;
/** Skew beyond this is a warning: timestamps in logs and run ids from different hosts disagree. */
export const SKEW_WARN_MS = 1_000;
/** Skew beyond this fails: this host's clock is not synchronised at all. */
export const SKEW_FAIL_MS = 60_000;
/** Round trips used to estimate the skew; the fastest one bounds the error best. */
const SKEW_SAMPLES = 3;

/** Default of {@link DoctorOptions.timeoutMs}. */
export const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * Opens the store with `open`, runs every check and closes it. Never throws for a store problem:
 * a store that cannot be opened or does not answer is a failed `connectivity` check.
 */
export async function runDoctorChecks(open: () => Promise<Store>, options: DoctorOptions): Promise<DoctorCheck[]> {
  const clock = options.hostClock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const bounded = <T>(work: Promise<T>, what: string): Promise<T> => withTimeout(work, timeoutMs, what, clock);
  const startedMs = clock.now();
  let store: Store | undefined;
  try {
    store = await bounded(open(), 'opening the store');
    await bounded(store.now(), 'the first round trip');
  } catch (err) {
    if (store) await closeQuietly(store, bounded);
    const skipped = (name: string): DoctorCheck => ({ name, status: CheckStatus.skip, result: 'not checked: the store is unreachable', action: null });
    return [connectivityFailure(options.store, err), skipped('schema'), skipped('clock skew'), ...(options.serverChecks?.names ?? []).map(skipped)];
  }
  try {
    const checks = [connectivityOk(options.store, clock.now() - startedMs)];
    checks.push(await checkSchema(store, bounded, options.store));
    checks.push(await checkClockSkew(store, bounded, options.store, clock));
    if (options.serverChecks) checks.push(...(await runServerChecks(options.serverChecks, bounded, options.store)));
    return checks;
  } finally {
    await closeQuietly(store, bounded);
  }
}

/** True when no check failed (warnings and skips do not fail the doctor). */
export function allPassed(checks: readonly DoctorCheck[]): boolean {
  return checks.every((c) => c.status !== CheckStatus.fail);
}

type Bounded = <T>(work: Promise<T>, what: string) => Promise<T>;

function connectivityOk(storeConfig: ResolvedStore, elapsedMs: number): DoctorCheck {
  const result = `${storeConfig.kind === StoreKind.sqlite ? 'opened' : 'connected'} in ${formatDurationMs(elapsedMs)}`;
  if (elapsedMs <= SLOW_CONNECT_MS) return { name: 'connectivity', status: CheckStatus.ok, result, action: null };
  return {
    name: 'connectivity',
    status: CheckStatus.warn,
    result: `${result} (slow)`,
    action: 'every claim and commit pays this latency: check the network path to the store and its load',
  };
}

/** What to check when a store cannot be reached, per store. */
const UNREACHABLE_ACTION: Readonly<Record<StoreKind, string>> = {
  postgres: 'check that PostgreSQL runs and accepts connections at the host and port of the URL, and the user, password and database in it',
  redis: 'check that redis-server runs and accepts connections at the host and port of the URL, and the user and password in it',
  sqlite: 'check the path (--db, KILN_DB, store.path) and that its folder is readable and writable; kiln migrate creates a new store',
};

function connectivityFailure(storeConfig: ResolvedStore, err: unknown): DoctorCheck {
  const action = UNREACHABLE_ACTION[storeConfig.kind];
  return { name: 'connectivity', status: CheckStatus.fail, result: `cannot reach the store: ${errorText(err, storeConfig)}`, action };
}

async function checkSchema(store: Store, bounded: Bounded, storeConfig: ResolvedStore): Promise<DoctorCheck> {
  const name = 'schema';
  let version;
  try {
    version = await bounded(store.schemaVersion(), 'reading the schema version');
  } catch (err) {
    return { name, status: CheckStatus.fail, result: `cannot read the schema version: ${errorText(err, storeConfig)}`, action: "check this user's permissions on the store" };
  }
  const { current, latest } = version;
  if (current === latest) return { name, status: CheckStatus.ok, result: `version ${current} (up to date)`, action: null };
  if (current > latest) {
    return {
      name,
      status: CheckStatus.fail,
      result: `version ${current} is newer than this kiln knows (${latest})`,
      action: 'a newer kiln migrated this store: upgrade kiln on this host',
    };
  }
  const pending = latest - current;
  const result = current === 0 ? `not initialised (this kiln needs version ${latest})` : `version ${current}, ${pending} migration${pending === 1 ? '' : 's'} pending (latest ${latest})`;
  return { name, status: CheckStatus.warn, result, action: 'run kiln migrate (kiln serve and kiln worker also migrate when they start)' };
}

async function checkClockSkew(store: Store, bounded: Bounded, storeConfig: ResolvedStore, clock: Clock): Promise<DoctorCheck> {
  const name = 'clock skew';
  if (storeConfig.kind === StoreKind.sqlite) {
    return { name, status: CheckStatus.skip, result: 'n/a: SQLite uses this host\'s clock', action: null };
  }
  let skew: ClockSkew;
  try {
    skew = await measureSkew(store, bounded, clock);
  } catch (err) {
    return { name, status: CheckStatus.fail, result: `cannot read the store clock: ${errorText(err, storeConfig)}`, action: 'check the connectivity failure above, then rerun' };
  }
  const { skewMs, errorMs } = skew;
  const size = Math.abs(skewMs);
  const direction = skewMs > 0 ? 'behind' : 'ahead of';
  const result = size <= errorMs ? `in step with the store (±${Math.max(1, Math.ceil(errorMs))} ms)` : `this host is ${Math.round(size)} ms ${direction} the store (±${Math.max(1, Math.ceil(errorMs))} ms)`;
  if (size <= SKEW_WARN_MS) return { name, status: CheckStatus.ok, result, action: null };
  const action = 'synchronise the clocks of this host and the database server (NTP, chrony); leases use the store\'s clock, logs and ids this host\'s';
  return { name, status: size > SKEW_FAIL_MS ? CheckStatus.fail : CheckStatus.warn, result, action };
}

/** The server's rows; when its settings cannot be read, each row says so (a warning: the store works). */
async function runServerChecks(checks: ServerChecks, bounded: Bounded, storeConfig: ResolvedStore): Promise<DoctorCheck[]> {
  try {
    return await bounded(checks.run(), 'reading the server settings');
  } catch (err) {
    const result = `cannot tell: the server settings could not be read: ${errorText(err, storeConfig)}`;
    return checks.names.map((name) => ({ name, status: CheckStatus.warn, result, action: 'grant this user INFO (and CONFIG GET) on the server, or check its settings by hand' }));
  }
}

/** Store clock minus this host's clock, and the bound on that estimate's error. */
interface ClockSkew {
  skewMs: number;
  errorMs: number;
}

/** The sample with the fastest round trip of {@link SKEW_SAMPLES}: the smallest error bound. */
async function measureSkew(store: Store, bounded: Bounded, clock: Clock): Promise<ClockSkew> {
  let best: ClockSkew = { skewMs: 0, errorMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < SKEW_SAMPLES; i++) {
    const sentMs = clock.now();
    const storeMs = await bounded(store.now(), 'reading the store clock');
    const receivedMs = clock.now();
    // The store read its clock somewhere within the round trip; assume the middle.
    const sample = { skewMs: storeMs - (sentMs + receivedMs) / 2, errorMs: (receivedMs - sentMs) / 2 };
    if (sample.errorMs < best.errorMs) best = sample;
  }
  return best;
}

/** An error's message; for a store with a URL with its password masked (drivers may echo it). */
function errorText(err: unknown, storeConfig: ResolvedStore): string {
  const message = messageOf(err);
  const url = storeUrl(storeConfig);
  return url === undefined ? message : redactSecrets(message, url);
}

/** `work`, or a rejection naming `what` once `timeoutMs` passes without an answer. */
function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string, clock: Clock): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimer(() => reject(new Error(`${what} took longer than ${formatDurationMs(timeoutMs)}`)), timeoutMs);
    work.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (err: unknown) => {
        cancel();
        reject(err);
      },
    );
  });
}

async function closeQuietly(store: Store, bounded: Bounded): Promise<void> {
  try {
    await bounded(store.close(), 'closing the store');
  } catch {
    // The report is what matters; a store that will not close cleanly is already reported.
  }
}

/**
 * The first non-empty message along the `cause` chain, with a system error code when there is one.
 * (A refused connection to `localhost` is an AggregateError with an empty message of its own.)
 */
function messageOf(err: unknown): string {
  let text = '';
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const { message, code, errors, cause } = e as { message?: unknown; code?: unknown; errors?: unknown; cause?: unknown };
    if (text === '' && typeof message === 'string') text = message;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code) && !codes.includes(code)) codes.push(code);
    e = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  const shownCodes = codes.filter((c) => !text.includes(c));
  const out = [text, ...shownCodes.map((c) => `(${c})`)].filter((p) => p !== '').join(' ');
  return out === '' ? String(err) : out;
}
