/**
 * What the QR routes do, without HTTP: look an image up by content hash, make sure a run renders
 * it (one run per hash however many requests race), wait briefly for it, and remember
 * `Idempotency-Key`s. The CLI's `kiln qr` uses the same service.
 */
import { ConflictError, NotFoundError, StageFailure, tenantKey, type JsonValue, type Kiln, type Run } from '../../index.ts';
import { canonicalQrRequest, qrContentHash } from './canonical.ts';
import { createImageMemo, type MemoImage } from './image-memo.ts';
import { parseQrRequest, type QrOptions } from './options.ts';
import { QR_PIPELINE, QR_PROFILE, recentRenders } from './pipeline.ts';

/** Default and largest `wait` of a request, ms. */
export const QR_WAIT_DEFAULT_MS = 2_000;
export const QR_WAIT_MAX_MS = 30_000;
/** Images kept in memory for repeated reads. */
const MEMO_MAX_BYTES = 64 * 1024 * 1024;
/** How many times a request follows failed runs of its hash with a new run before giving up. */
const MAX_RESUBMITS = 3;
/**
 * Looks at the publication while a run renders, ms: the first wait, doubled up to the last. A
 * worker of this process ending the run cuts a wait short, so these only pace the looks for runs
 * that workers of other processes render (and every look is a store read).
 */
const POLL_FIRST_MS = 20;
const POLL_MAX_MS = 50;
/** Run statuses after which a new run of the same hash may succeed (nothing permanent went wrong). */
const RESUBMITTABLE: ReadonlySet<string> = new Set(['cancelled', 'superseded', 'failed', 'dead_lettered']);
const FAILED: ReadonlySet<string> = new Set(['failed', 'dead_lettered']);
/** Request-record scopes: the canonical request behind a hash, and client Idempotency-Keys. */
const CONTENT_SCOPE = 'qr.content';
const IDEMPOTENCY_SCOPE = 'qr.idempotency-key';
/**
 * Request-record scope of which tenant asked for which hash (key `<tenant>/<hash>`): renders are
 * shared by content (one run and one image per hash, whoever asks), but a tenant sees only the
 * hashes it asked for (`GET /v1/qr/:hash`, `GET /v1/requests/:id`).
 */
const TENANT_SCOPE = 'qr.tenant';
/** (tenant, hash) pairs this process knows were asked for, so a cached read costs no store round trip. */
const KNOWN_OWNERS_MAX = 100_000;

/** The answer to a QR request: the image, or the run still building it. */
export type QrAnswer = { kind: 'image'; hash: string; image: MemoImage } | { kind: 'pending'; hash: string; run: Run };

/** A request as the routes and the CLI pass it. */
export interface QrRequest {
  /** The body (JSON) or the query string, `wait` already removed. */
  raw: unknown;
  source: 'json' | 'query';
  waitMs: number;
  idempotencyKey?: string;
  /** W3C `traceparent` of the caller: a run started for the request joins its trace. */
  traceparent?: string;
  /** Who asks (see {@link QrCaller}); omitted: nobody in particular (the CLI, an open server). */
  caller?: QrCaller;
}

/**
 * Who asks, once API tokens are in use: the tenant the request acts for (a run it starts carries
 * it, its Idempotency-Keys are its own, and the hash becomes one it asked for) and whether it sees
 * only what that tenant asked for (`restricted`: a token without admin).
 */
export interface QrCaller {
  tenant: string;
  restricted: boolean;
}

/** The QR service over one engine. */
export interface QrService {
  /** Renders (or finds) the image of a request, waiting up to `waitMs` for it. */
  request(request: QrRequest): Promise<QrAnswer>;
  /**
   * The image if published, else the run building it (started again if needed, joining the trace
   * of `traceparent`); `NotFoundError` for an unknown hash.
   */
  byHash(hash: string, traceparent?: string, caller?: QrCaller): Promise<QrAnswer>;
  /**
   * The run of a request id (request ids are run ids) and its content hash; `NotFoundError` if
   * unknown, not a QR run, or (a restricted caller) of a hash its tenant never asked for.
   */
  requestRun(id: string, caller?: QrCaller): Promise<{ run: Run; hash: string }>;
}

/** The run's stored error, as the typed failure it was. */
function runFailure(run: Run): StageFailure {
  const e = (run.error ?? {}) as { code?: string; message?: string };
  return StageFailure.permanent(e.message ?? `run ${run.id} ended ${run.status}`, { code: e.code ?? 'STAGE_FAILED', details: { runId: run.id } });
}

function isPermanentFailure(run: Run): boolean {
  return FAILED.has(run.status) && (run.error as { class?: string } | null)?.class === 'permanent';
}

/** Creates the service. */
export function createQrService(kiln: Kiln): QrService {
  const memo = createImageMemo(MEMO_MAX_BYTES);

  const lookup = async (hash: string): Promise<MemoImage | null> => {
    const memoised = memo.get(hash);
    if (memoised) return memoised;
    const publication = await kiln.getPublication(hash, QR_PROFILE);
    if (!publication) return null;
    const rendered = recentRenders.get(publication.artifactRef);
    const bytes = rendered?.bytes ?? (await kiln.artifacts.get(publication.artifactRef));
    const image = { bytes, mediaType: sniffMediaType(bytes) };
    memo.set(hash, image);
    return image;
  };

  /** `<tenant>/<hash>` pairs known to be asked for, oldest first (bounded). */
  const knownOwners = new Set<string>();
  const know = (key: string): void => {
    if (knownOwners.size >= KNOWN_OWNERS_MAX) knownOwners.delete(knownOwners.values().next().value as string);
    knownOwners.add(key);
  };
  /** Records that `caller`'s tenant asked for `hash` (once per process and pair). */
  const recordOwner = async (hash: string, caller: QrCaller | undefined): Promise<void> => {
    if (!caller) return;
    const key = tenantKey(caller.tenant, hash);
    if (knownOwners.has(key)) return;
    await kiln.rememberRequest({ scope: TENANT_SCOPE, key, requestHash: hash, value: { contentHash: hash } });
    know(key);
  };
  /** Whether `caller` may see `hash`: unrestricted callers all; a tenant the hashes it asked for. */
  const maySee = async (hash: string, caller: QrCaller | undefined): Promise<boolean> => {
    if (!caller?.restricted) return true;
    const key = tenantKey(caller.tenant, hash);
    if (knownOwners.has(key)) return true;
    if (!(await kiln.getRequest(TENANT_SCOPE, key))) return false;
    know(key);
    return true;
  };

  /** The live (or succeeded) run of `hash`: identical requests share it; failed runs are followed by a new one. */
  const ensureRun = async (canonical: JsonValue, hash: string, traceparent: string | undefined, tenant: string | undefined): Promise<Run> => {
    // Remembered so that `GET /v1/qr/:hash` can start the render again after a failed run.
    await kiln.rememberRequest({ scope: CONTENT_SCOPE, key: hash, requestHash: hash, value: canonical });
    let key = hash;
    for (let i = 0; ; i++) {
      // The render is shared by content: a run started for a tenant carries it, and serves everyone.
      const { run } = await kiln.submit(QR_PIPELINE, canonical, { idempotencyKey: key, ...(traceparent === undefined ? {} : { traceparent }), ...(tenant === undefined ? {} : { tenant }) });
      if (!RESUBMITTABLE.has(run.status)) return run;
      if (isPermanentFailure(run) || i === MAX_RESUBMITS) throw runFailure(run);
      // Derived from the failed run, so every request that sees it picks the same next key.
      key = `${hash}:after:${run.id}`;
    }
  };

  /**
   * Polls the publication until it appears (the image), the run fails for good (throws), or
   * the longest wait passes (null). One poller per hash serves every waiting request.
   */
  const pollPublished = async (hash: string, run: Run): Promise<MemoImage | null> => {
    const deadline = Date.now() + QR_WAIT_MAX_MS;
    let intervalMs = POLL_FIRST_MS;
    // `run` comes from ensureRun (never a failed one): unless it already succeeded, the caller
    // found no image just before and none is made yet, so the first look comes after a wait (a
    // worker of this process ending the run cuts it short).
    if (run.status !== 'succeeded') await kiln.untilRunEnds(run.id, POLL_FIRST_MS);
    for (let polls = 1; ; polls++) {
      const image = await lookup(hash);
      if (image) return image;
      if (Date.now() >= deadline) return null;
      await kiln.untilRunEnds(run.id, intervalMs);
      intervalMs = Math.min(POLL_MAX_MS, intervalMs * 2);
      // The publication is the cheap read; the run is checked now and then to stop on failure.
      if (polls % 8 === 0) {
        run = (await kiln.getRun(run.id)).run;
        if (FAILED.has(run.status)) throw runFailure(run);
      }
    }
  };

  /** Identical requests in this process share one run lookup and one poller. */
  const runsInFlight = new Map<string, Promise<Run>>();
  const pollers = new Map<string, Promise<MemoImage | null>>();

  /** The image once published, or `pending` after `waitMs`. */
  const waitForImage = async (hash: string, run: Run, waitMs: number): Promise<QrAnswer> => {
    const published = coalesce(pollers, hash, () => pollPublished(hash, run));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
    try {
      const image = await Promise.race([published, timeout]);
      return image ? { kind: 'image', hash, image } : { kind: 'pending', hash, run };
    } finally {
      clearTimeout(timer);
    }
  };

  const checkIdempotencyKey = async (key: string, hash: string): Promise<void> => {
    const { record } = await kiln.rememberRequest({ scope: IDEMPOTENCY_SCOPE, key, requestHash: hash, value: { contentHash: hash } });
    if (record.requestHash !== hash) {
      throw new ConflictError('IDEMPOTENCY_KEY_REUSED', `Idempotency-Key ${key} was used with a different request`, { details: { key } });
    }
  };

  const build = async (options: QrOptions, waitMs: number, traceparent: string | undefined, caller: QrCaller | undefined): Promise<QrAnswer> => {
    const canonical = canonicalQrRequest(options);
    const hash = qrContentHash(options);
    await recordOwner(hash, caller);
    const image = await lookup(hash);
    if (image) return { kind: 'image', hash, image };
    // Identical requests in flight share the first one's run, and so its trace (and its tenant).
    const run = await coalesce(runsInFlight, hash, () => ensureRun(canonical, hash, traceparent, caller?.tenant));
    return waitMs > 0 || run.status === 'succeeded' ? waitForImage(hash, run, waitMs) : { kind: 'pending', hash, run };
  };

  return {
    async request({ raw, source, waitMs, idempotencyKey, traceparent, caller }) {
      const options = parseQrRequest(raw, source);
      // A tenant's Idempotency-Keys are its own: B's key never answers A's request.
      if (idempotencyKey !== undefined) await checkIdempotencyKey(caller ? tenantKey(caller.tenant, idempotencyKey) : idempotencyKey, qrContentHash(options));
      return build(options, waitMs, traceparent, caller);
    },
    async byHash(hash, traceparent, caller) {
      // Another tenant's hash is answered as an unknown one.
      if (!(await maySee(hash, caller))) throw new NotFoundError('qr image', hash);
      const image = await lookup(hash);
      if (image) return { kind: 'image', hash, image };
      const record = await kiln.getRequest(CONTENT_SCOPE, hash);
      if (!record) throw new NotFoundError('qr image', hash);
      return build(parseQrRequest(record.value, 'json'), 0, traceparent, caller);
    },
    async requestRun(id, caller) {
      const { run } = await kiln.getRun(id).catch((err: unknown) => {
        throw err instanceof NotFoundError ? new NotFoundError('request', id) : err;
      });
      if (run.pipeline !== QR_PIPELINE) throw new NotFoundError('request', id);
      // The input is the canonical request, so its hash is the content hash.
      const hash = qrContentHash(parseQrRequest(run.input, 'json'));
      // A tenant sees the runs of the hashes it asked for (a shared render may carry another tenant).
      if (run.tenant !== caller?.tenant && !(await maySee(hash, caller))) throw new NotFoundError('request', id);
      return { run, hash };
    },
  };
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

/** Shares one promise per key among concurrent callers; the next caller after it settles starts anew. */
function coalesce<T>(inFlight: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> {
  const running = inFlight.get(key);
  if (running) return running;
  const started = start().finally(() => inFlight.delete(key));
  // Callers that stopped waiting must not leave a later rejection unhandled.
  started.catch(() => {});
  inFlight.set(key, started);
  return started;
}

/** Only PNG and SVG are ever published here; the bytes say which. */
function sniffMediaType(bytes: Uint8Array): string {
  return PNG_SIGNATURE.every((b, i) => bytes[i] === b) ? 'image/png' : 'image/svg+xml';
}
