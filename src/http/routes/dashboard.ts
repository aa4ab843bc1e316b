/**
 * `GET /dashboard`: the operator dashboard, static files shipped in src/dashboard/ (HTML, CSS,
 * browser ES modules; no build step, nothing fetched from another host). The files are read once,
 * when the app is built, into memory, so a request never touches the file system and no path
 * from a request ever reaches it. The page reads and acts through the public `/v1` API only.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { NotFoundError } from '../../core/errors.ts';
import { access, PUBLIC } from '../auth.ts';

/** Where the dashboard's files live. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/', import.meta.url));

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The page may load and call only this origin: scripts, styles, images and fetches from 'self',
 * no inline script or style, no plugins, not framed.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** Every file of `dir` (recursively) with a known type, by its `/`-separated path. */
async function loadFiles(dir: string): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const type = MEDIA_TYPES[extname(entry.name)];
    if (!entry.isFile() || type === undefined) continue;
    const path = join(entry.parentPath, entry.name);
    const body = await readFile(path);
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    files.set(relative(dir, path).split(sep).join('/'), { body, type, etag });
  }
  return files;
}

/** Sends a file; a matching If-None-Match gets 304. `no-cache`: revalidated on every load, so an upgrade shows at once. */
function send(reply: FastifyReply, file: StaticFile, ifNoneMatch: string | undefined): FastifyReply {
  void reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .header('etag', file.etag);
  if (ifNoneMatch === file.etag) return reply.status(304).send();
  return reply.type(file.type).send(file.body);
}

/** Registers `GET /dashboard` (the page) and `GET /dashboard/<file>` (its assets). */
export const dashboardRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, options) => {
  const files = await loadFiles(options.dir ?? DASHBOARD_DIR);
  const index = files.get('index.html');
  if (!index) throw new Error(`dashboard: no index.html in ${options.dir ?? DASHBOARD_DIR}`);
  // Static files are fetched on every page load; request logs would only repeat that.
  // Public: the page and its scripts hold no data, and the page must load to show its sign-in
  // form; everything it shows comes from /v1 routes, with the token the user signs in with.
  const opts = { logLevel: 'warn' as const, config: access(PUBLIC) };
  app.get('/dashboard', opts, async (request, reply) => send(reply, index, request.headers['if-none-match']));
  app.get('/dashboard/', opts, async (request, reply) => send(reply, index, request.headers['if-none-match']));
  app.get<{ Params: { '*': string } }>('/dashboard/*', opts, async (request, reply) => {
    const file = files.get(request.params['*']);
    if (!file) throw new NotFoundError('dashboard file', request.params['*']);
    return send(reply, file, request.headers['if-none-match']);
  });
};
