/**
 * A client of the asset routes of a real `kiln serve` (`PUT/GET/DELETE /v1/assets/...`), for the
 * asset end-to-end tests: uploads as raw bodies or multipart forms, streamed uploads without a
 * Content-Length (or held open), profile reads with their headers, and waiting for runs to end.
 */
import { request as httpRequest } from 'node:http';

/** How an upload is sent. */
export const UploadMode = { raw: 'raw', multipart: 'multipart' } as const;
/** One of {@link UploadMode}'s values. */
export type UploadMode = (typeof UploadMode)[keyof typeof UploadMode];

/** One upload as a test describes it. */
export interface UploadRequest {
  mode: UploadMode;
  /** Content-Type of the raw body, or of the multipart file part. */
  contentType: string;
  /** File name of the multipart part (never consulted by kiln: a misleading one must not matter). */
  filename?: string;
}

/** The JSON answer of `PUT /v1/assets/:id`: 202 with the started version, or an error envelope. */
export interface UploadAnswer {
  status: number;
  body: {
    asset_id?: string;
    version?: number;
    run_id?: string;
    code?: string;
    message?: string;
  };
}

/** `PUT /v1/assets/:id` with `bytes`, raw or as the file part of a multipart form. */
export async function putAsset(base: string, assetId: string, bytes: Uint8Array, upload: UploadRequest): Promise<UploadAnswer> {
  const url = `${base}/v1/assets/${assetId}`;
  let res: Response;
  if (upload.mode === UploadMode.multipart) {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: upload.contentType }), upload.filename ?? `${assetId}.bin`);
    res = await fetch(url, { method: 'PUT', body: form });
  } else {
    res = await fetch(url, { method: 'PUT', headers: { 'content-type': upload.contentType }, body: bytes });
  }
  return { status: res.status, body: (await res.json()) as UploadAnswer['body'] };
}

/** A streamed upload in progress (see {@link startStreamedPut}). */
export interface StreamedPut {
  /** Resolves with the answer, or rejects when the connection dies first (e.g. the server was killed). */
  answer: Promise<UploadAnswer>;
  /** Sends more of the body. */
  write(chunk: Uint8Array): void;
  /** Ends the body. */
  end(): void;
  /** Drops the connection. */
  destroy(): void;
}

/**
 * Starts `PUT /v1/assets/:id` with a raw body the caller streams (chunked, so no Content-Length
 * unless `headers` has one). The answer may come before the body is complete (an early 413): it
 * is delivered even if later writes fail.
 */
export function startStreamedPut(base: string, assetId: string, headers: Record<string, string>): StreamedPut {
  // A connection of its own: after an early answer the rest of the body is unwanted, and a pooled
  // connection reused for the next request would sit behind it.
  const req = httpRequest(`${base}/v1/assets/${assetId}`, { method: 'PUT', headers, agent: false });
  const answer = new Promise<UploadAnswer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as UploadAnswer['body']) : {} }));
      res.on('error', reject);
    });
    // After an early answer the server may reset the connection while the body is still going out.
    req.on('error', reject);
  });
  // A rejection nobody awaits yet (the test awaits later) must not crash the test process.
  answer.catch(() => undefined);
  req.flushHeaders();
  return {
    answer,
    write: (chunk) => void req.write(chunk),
    end: () => void req.end(),
    destroy: () => void req.destroy(),
  };
}

/** Sends a whole raw body with an explicit Content-Length through {@link startStreamedPut}. */
export async function putWithLength(base: string, assetId: string, bytes: Uint8Array, contentType: string): Promise<UploadAnswer> {
  const put = startStreamedPut(base, assetId, { 'content-type': contentType, 'content-length': String(bytes.byteLength) });
  put.write(bytes);
  put.end();
  return put.answer;
}

/** A multipart/form-data body with one file part, and its Content-Type (for streaming it by hand). */
export function multipartBody(bytes: Uint8Array, filename: string, partType: string): { body: Buffer; contentType: string } {
  const boundary = `kiln-test-${Math.random().toString(16).slice(2)}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${partType}\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Streams `body` in 64 KiB chunks without a Content-Length (chunked encoding). */
export async function putChunked(base: string, assetId: string, body: Uint8Array, contentType: string): Promise<UploadAnswer> {
  const put = startStreamedPut(base, assetId, { 'content-type': contentType });
  const chunkBytes = 64 * 1024;
  for (let offset = 0; offset < body.byteLength; offset += chunkBytes) put.write(body.subarray(offset, offset + chunkBytes));
  put.end();
  return put.answer;
}

/** A `GET /v1/assets/:id/:profile` answer. */
export interface ProfileRead {
  status: number;
  /** `x-asset-version`, or null. */
  version: number | null;
  etag: string | null;
  contentType: string | null;
  bytes: Uint8Array;
}

/** Reads one published profile. */
export async function getProfile(base: string, assetId: string, profile: string, headers: Record<string, string> = {}): Promise<ProfileRead> {
  const res = await fetch(`${base}/v1/assets/${assetId}/${profile}`, { headers });
  const version = res.headers.get('x-asset-version');
  return {
    status: res.status,
    version: version === null ? null : Number(version),
    etag: res.headers.get('etag'),
    contentType: res.headers.get('content-type'),
    bytes: new Uint8Array(await res.arrayBuffer()),
  };
}

/** The parts of `GET /v1/runs/:id` the asset tests read. */
export interface AssetRunJson {
  id: string;
  status: string;
  subjectId: string | null;
  subjectVersion: number | null;
  input: { assetId: string; version: number; source: { upload?: string } };
  error: { class: string; code: string; message: string } | null;
  stages: { stage: string; status: string; attempts: number; output: unknown; error: { code: string } | null }[];
}

/** Statuses after which a run does nothing more on its own (dead-lettered and parked wait for an operator). */
export const SETTLED_RUN_STATUSES: readonly string[] = ['succeeded', 'failed', 'cancelled', 'superseded', 'dead_lettered', 'parked'];

/** The uploaded source object of a run. */
export function sourceOf(run: AssetRunJson): string {
  const ref = run.input.source.upload;
  if (ref === undefined) throw new Error(`run ${run.id} has no uploaded source`);
  return ref;
}

/** The output of one stage of a run (null when the stage has none yet). */
export function stageOutput<T>(run: AssetRunJson, stage: string): T | null {
  return (run.stages.find((s) => s.stage === stage)?.output ?? null) as T | null;
}

/** `GET /v1/runs/:id`. */
export async function getRunJson(base: string, runId: string): Promise<AssetRunJson> {
  const res = await fetch(`${base}/v1/runs/${runId}`);
  if (!res.ok) throw new Error(`GET /v1/runs/${runId} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as AssetRunJson;
}

/**
 * Waits until every run in `runIds` has settled (see {@link SETTLED_RUN_STATUSES}) and returns their
 * details by id. Polls one run list per round rather than each run, so 50 runs cost one request.
 */
export async function waitForRunsSettled(base: string, runIds: readonly string[], timeoutMs: number): Promise<Map<string, AssetRunJson>> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(runIds);
  for (;;) {
    const res = await fetch(`${base}/v1/runs?pipeline=thumbnails&limit=500`);
    const runs = (await res.json()) as { id: string; status: string }[];
    for (const run of runs) if (SETTLED_RUN_STATUSES.includes(run.status)) pending.delete(run.id);
    if (pending.size === 0) break;
    if (Date.now() > deadline) {
      const stuck = runs.filter((r) => pending.has(r.id)).map((r) => `${r.id}=${r.status}`);
      throw new Error(`${pending.size} run(s) not settled within ${timeoutMs} ms: ${stuck.slice(0, 10).join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  const details = await Promise.all(runIds.map((id) => getRunJson(base, id)));
  return new Map(details.map((d) => [d.id, d]));
}
