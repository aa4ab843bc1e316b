/**
 * The S3 side of the S3 artifact store: where the objects live (`s3://bucket/prefix`), the client
 * built from kiln.yaml and the standard AWS environment, and the one mapping of S3 failures.
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ArtifactsUnavailableError, PipelineError, ValidationError } from '../core/errors.ts';

/** Where and how to reach the bucket; every field but `url` falls back to the AWS environment. */
export interface S3ArtifactsSettings {
  /** `s3://bucket` or `s3://bucket/prefix`. */
  url: string;
  /** S3-compatible endpoint (`http://127.0.0.1:9000`); else `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`; else AWS. */
  endpoint?: string;
  /** Else `AWS_REGION` / `AWS_DEFAULT_REGION`; else `us-east-1`. */
  region?: string;
  /** Path-style URLs (`endpoint/bucket/key`). @default true when an endpoint is set, else false */
  forcePathStyle?: boolean;
  /** With `secretAccessKey`; else the SDK's default chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, profiles, roles). */
  accessKeyId?: string;
  secretAccessKey?: string;
}

/** A parsed `s3://` URL: the bucket and the key prefix (empty, or ending in `/`). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

/** Parses `s3://bucket[/prefix]`; throws `ValidationError` when it is not one. */
export function parseS3Url(url: string): S3Location {
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/i.exec(url);
  if (!match?.[1]) throw new ValidationError(`artifact store URL must be s3://bucket[/prefix], got ${JSON.stringify(url)}`);
  const path = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: match[1], prefix: path === '' ? '' : `${path}/` };
}

/** Environment variable that silences the SDK's NodeVersionSupportWarning (documented by the SDK). */
const SDK_NODE_WARNING_ENV = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/** Connect and per-request timeouts: an S3 that hangs must fail a request, not hold it. */
const CONNECTION_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 60_000;

/** Builds the client: explicit settings first, then the AWS environment (`env`). */
export function createS3Client(settings: S3ArtifactsSettings, env: Readonly<Record<string, string | undefined>> = process.env): S3Client {
  const endpoint = settings.endpoint ?? (env['AWS_ENDPOINT_URL_S3'] || env['AWS_ENDPOINT_URL'] || undefined);
  const config: S3ClientConfig = {
    region: settings.region ?? (env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || 'us-east-1'),
    forcePathStyle: settings.forcePathStyle ?? endpoint !== undefined,
    // kiln sends its own SHA-256 checksum; the SDK's default CRC trailers (aws-chunked bodies) are
    // not understood by every S3-compatible server.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(settings.accessKeyId !== undefined && settings.secretAccessKey !== undefined
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
  };
  // The SDK warns once per process, at the first client, that its releases after January 2027
  // need Node 22. kiln supports Node 20, so the warning would only be noise in kiln's output: it is
  // silenced by the SDK's own switch, for this construction only, unless the user set the switch.
  if (process.env[SDK_NODE_WARNING_ENV] !== undefined) return new S3Client(config);
  process.env[SDK_NODE_WARNING_ENV] = 'true';
  try {
    return new S3Client(config);
  } finally {
    delete process.env[SDK_NODE_WARNING_ENV];
  }
}

/** Retry-After suggested with `ARTIFACTS_UNAVAILABLE` from S3: an outage or throttling. */
const UNAVAILABLE_RETRY_AFTER_MS = 5_000;

/** HTTP status of an SDK error (`$metadata.httpStatusCode`), when the server answered. */
export function s3Status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** True for "no such object" (GET: `NoSuchKey`, HEAD: `NotFound`, both 404). */
export function isS3NotFound(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || (s3Status(err) === 404 && name !== 'NoSuchBucket');
}

/**
 * The one mapping of S3 failures: every failure of the SDK (it carries `$metadata`: unreachable,
 * timed out, 5xx, throttled, denied, no bucket) becomes `ArtifactsUnavailableError` (503,
 * retryable); kiln's own errors and programming errors pass through.
 */
export function mapS3Error(err: unknown, bucket: string): unknown {
  if (err instanceof PipelineError || typeof err !== 'object' || err === null || !('$metadata' in err)) return err;
  const e = err as { name?: string; code?: string; message?: string };
  const status = s3Status(err);
  const what = e.name && e.name !== 'Error' ? e.name : (e.code ?? 'error');
  return new ArtifactsUnavailableError(`the S3 artifact store (bucket ${bucket}) cannot serve now: ${what}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? ''}`, {
    cause: err,
    details: { s3Error: what, ...(status ? { httpStatus: status } : {}), retryAfterMs: UNAVAILABLE_RETRY_AFTER_MS },
  });
}
