/**
 * A private S3-compatible server for tests: s3rver (npm devDependency, pure JavaScript; no
 * S3-compatible server is packaged in Debian here) in a CHILD process, one per test process,
 * started on first use. A child process is a server as kiln meets one in production (sockets that
 * refuse or reset when it dies), and a test can stop it and start it again on the same port and
 * files to test an outage. s3rver accepts any bucket name of 3+ characters and the credentials
 * S3RVER/S3RVER; it ignores `If-None-Match` and `x-amz-checksum-sha256` on PUT (see the S3 store).
 *
 * `KILN_S3_URL=s3://bucket[/prefix]` wins when set: a bucket on a server someone else runs (its
 * endpoint, region and credentials from the standard AWS variables: AWS_ENDPOINT_URL, AWS_REGION,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY). Nothing is started, stopped or created then; every test
 * still gets a prefix of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createS3Client, parseS3Url, type S3ArtifactsSettings } from '../../src/artifacts/s3-client.ts';

const CHILD = new URL('./s3rver-child.mjs', import.meta.url).pathname;
const BUCKET = 'kiln-tests';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** An S3 the caller may use. */
export interface S3TestServer {
  /** Settings of a new, empty place for one test: `url` is `s3://bucket/<unique prefix>`. */
  newStore(): S3ArtifactsSettings & { url: string };
  /** The same settings as the environment of a kiln process (`KILN_ARTIFACTS_URL` and the AWS variables). */
  envOf(settings: S3ArtifactsSettings): Record<string, string>;
  /** True when this process runs the server (it can be stopped and started). */
  readonly owned: boolean;
  /** Stops the server, keeping its files (an outage); `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

interface OwnedServer {
  dir: string;
  port: number;
  child: ChildProcess | undefined;
}

/** Starts the child on `server.port` (0 the first time) and resolves once it listens. */
async function spawnServer(server: OwnedServer): Promise<void> {
  const child = spawn(process.execPath, [CHILD, String(server.port), server.dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  server.child = child;
  server.port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before listening`)));
    child.once('error', reject);
  });
  // The server must not keep the test process alive: the exit hook kills it.
  child.stdout?.destroy();
  child.removeAllListeners('exit');
  child.unref();
}

/** SIGKILLs the server (an outage as abrupt as a crash) and waits until it is gone. */
async function stopChild(server: OwnedServer): Promise<void> {
  const child = server.child;
  server.child = undefined;
  if (child?.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Waited for: it must hold the event loop until it is gone.
  child.ref();
  child.kill('SIGKILL');
  await exited;
}

function unique(): string {
  return `t-${randomBytes(6).toString('hex')}`;
}

async function startOwned(): Promise<S3TestServer> {
  const server: OwnedServer = { dir: mkdtempSync(join(tmpdir(), 'kiln-s3-')), port: 0, child: undefined };
  await spawnServer(server);
  process.once('exit', () => {
    server.child?.kill('SIGKILL');
    rmSync(server.dir, { recursive: true, force: true });
  });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const client = createS3Client({ url: `s3://${BUCKET}`, endpoint, region: 'us-east-1', ...CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  client.destroy();
  return {
    owned: true,
    newStore: () => ({ url: `s3://${BUCKET}/${unique()}`, endpoint, region: 'us-east-1', forcePathStyle: true, ...CREDENTIALS }),
    envOf: envOf,
    stop: () => stopChild(server),
    async start() {
      if (server.child === undefined) await spawnServer(server);
    },
  };
}

function envOf(settings: S3ArtifactsSettings): Record<string, string> {
  const env: Record<string, string> = { KILN_ARTIFACTS_URL: settings.url };
  if (settings.endpoint) env['AWS_ENDPOINT_URL'] = settings.endpoint;
  if (settings.region) env['AWS_REGION'] = settings.region;
  if (settings.accessKeyId) env['AWS_ACCESS_KEY_ID'] = settings.accessKeyId;
  if (settings.secretAccessKey) env['AWS_SECRET_ACCESS_KEY'] = settings.secretAccessKey;
  return env;
}

function external(url: string): S3TestServer {
  const { bucket, prefix } = parseS3Url(url);
  const refuse = async (): Promise<void> => {
    throw new Error('an S3 named by KILN_S3_URL cannot be stopped from here');
  };
  return {
    owned: false,
    // Endpoint, region and credentials come from the AWS variables, in the tests as in kiln.
    newStore: () => ({ url: `s3://${bucket}/${prefix}${unique()}` }),
    envOf: (settings) => ({ KILN_ARTIFACTS_URL: settings.url }),
    stop: refuse,
    start: refuse,
  };
}

let shared: Promise<S3TestServer> | undefined;

/** The S3 of this test process: `KILN_S3_URL`'s bucket, else a private s3rver started now. */
export function sharedS3(): Promise<S3TestServer> {
  const url = process.env['KILN_S3_URL'];
  shared ??= url ? Promise.resolve(external(url)) : startOwned();
  return shared;
}
