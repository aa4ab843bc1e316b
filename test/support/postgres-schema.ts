/**
 * The PostgreSQL store's schema as `pg_dump` prints it: dumping one schema, normalising the dump
 * so that it names neither the schema nor pg_dump's version, and loading the committed dump of a
 * schema at version 9 (`test/fixtures/postgres-schema-0009.sql.gz`) into a fresh schema.
 *
 * `src/stores/postgres/schema.sql` is the normalised dump of one freshly migrated schema, with
 * every function body replaced by its sha256 (the text lives once, in `routines/`). Run this file
 * to write it again after changing a migration or a routine:
 *
 *   npm run schema:postgres     # node --import tsx test/support/postgres-schema.ts
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.ts';
import { findBinDir, startPostgres } from './postgres-cluster.ts';

const run = promisify(execFile);

/** The committed snapshot of a freshly migrated schema. */
export const SCHEMA_SNAPSHOT_FILE = fileURLToPath(new URL('../../src/stores/postgres/schema.sql', import.meta.url));

/** The committed dump of a schema built by migrations 0001-0009 as they were released. */
export const FIXTURE_0009_FILE = fileURLToPath(new URL('../fixtures/postgres-schema-0009.sql.gz', import.meta.url));

/** Stands for the schema name in the fixture; replaced by the target schema when it is loaded. */
export const FIXTURE_SCHEMA_PLACEHOLDER = 'kiln_schema_placeholder';

/** First lines of the snapshot: where it comes from. */
const SNAPSHOT_HEADER = `-- The schema of a freshly migrated PostgreSQL store, as pg_dump prints it (schema renamed kiln,
-- session settings dropped, each function body replaced by its sha256: the text is in routines/).
-- Generated: npm run schema:postgres (test/support/postgres-schema.ts). Do not edit.

`;

/** The name the snapshot gives the schema, whatever schema was dumped. */
const SNAPSHOT_SCHEMA = 'kiln';

/** `pg_dump` of the newest installed server (found as `initdb` is), or undefined. */
export function pgDumpPath(): string | undefined {
  const binDir = findBinDir();
  const path = binDir === undefined ? undefined : join(binDir, 'pg_dump');
  return path !== undefined && existsSync(path) ? path : undefined;
}

/** Why schema dumps cannot be made here, or undefined when they can. */
export function pgDumpSkipReason(): string | undefined {
  return pgDumpPath() === undefined ? 'no pg_dump under /usr/lib/postgresql/*/bin' : undefined;
}

/** Runs `pg_dump` on one schema of the database at `url` with `args`; returns the dump. */
export async function pgDump(url: string, schema: string, args: readonly string[]): Promise<string> {
  const binary = pgDumpPath();
  if (binary === undefined) throw new Error(pgDumpSkipReason());
  const { stdout } = await run(binary, ['--dbname', url, '--schema', schema, '--no-owner', '--no-privileges', ...args], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60_000,
  });
  return stdout;
}

/** Every whole-word occurrence of `name` in `text` replaced by `by`. */
function renameSchema(text: string, name: string, by: string): string {
  return text.replace(new RegExp(`\\b${name}\\b`, 'g'), by);
}

/**
 * What varies from one dump of the same schema to the next, removed: psql meta-commands
 * (`\restrict` carries a random key) and the version comments; `schema` becomes `by`.
 */
function stableDump(dump: string, schema: string, by: string): string {
  const lines = dump.split('\n').filter((line) => !line.startsWith('\\') && !/^-- Dumped (from|by) /.test(line));
  return renameSchema(lines.join('\n'), schema, by);
}

/** sha256 hex of a function body. */
function bodyHash(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * The snapshot form of a `--schema-only` dump of `schema`: stable (see {@link stableDump}), the
 * schema named `kiln`, no session settings, and each function body (`AS $tag$...$tag$`) replaced
 * by `AS $$-- sha256:<hex of the body>$$`, so the snapshot changes whenever a body does without
 * restating it. Runs of blank lines are squeezed to one.
 */
export function schemaSnapshot(dump: string, schema: string): string {
  const stable = stableDump(dump, schema, SNAPSHOT_SCHEMA)
    .split('\n')
    .filter((line) => !line.startsWith('SET ') && !line.startsWith('SELECT pg_catalog.set_config('))
    .join('\n');
  const hashed = stable.replace(/AS \$([A-Za-z_]*)\$([\s\S]*?)\$\1\$/g, (_all, _tag: string, body: string) => `AS $$-- sha256:${bodyHash(body)}$$`);
  return `${SNAPSHOT_HEADER}${hashed.replace(/\n{3,}/g, '\n\n').trim()}\n`;
}

/** The snapshot of `schema` as it is now in the database at `url`. */
export async function dumpSchemaSnapshot(url: string, schema: string): Promise<string> {
  return schemaSnapshot(await pgDump(url, schema, ['--schema-only']), schema);
}

/**
 * The fixture form of a full dump (`--inserts`) of `schema`: stable, with the schema named
 * {@link FIXTURE_SCHEMA_PLACEHOLDER}. Session settings stay: loading needs
 * `check_function_bodies = off`, as a restore does.
 */
export function fixtureDump(dump: string, schema: string): string {
  return stableDump(dump, schema, FIXTURE_SCHEMA_PLACEHOLDER);
}

/**
 * Creates `schema` in the database at `url` as the 0009 fixture describes it: the tables, types
 * and functions of migrations 0001-0009 as released, and their `schema_version` rows. On a
 * connection of its own, since the dump changes session settings.
 */
export async function loadFixture0009(url: string, schema: string): Promise<void> {
  const sql = renameSchema(gunzipSync(readFileSync(FIXTURE_0009_FILE)).toString('utf8'), FIXTURE_SCHEMA_PLACEHOLDER, schema);
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Migrates a fresh schema on a private cluster and writes its snapshot to {@link SCHEMA_SNAPSHOT_FILE}. */
async function writeSnapshot(): Promise<void> {
  const server = await startPostgres();
  const schema = `kiln_snapshot_${process.pid}`;
  const store = createPostgresStore({ connectionString: server.url, schema });
  const admin = new pg.Client({ connectionString: server.url });
  try {
    await store.migrate();
    writeFileSync(SCHEMA_SNAPSHOT_FILE, await dumpSchemaSnapshot(server.url, schema));
    console.log(`wrote ${SCHEMA_SNAPSHOT_FILE}`);
  } finally {
    await store.close();
    // A KILN_PG_URL server outlives this script: leave nothing behind on it.
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    await server.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await writeSnapshot();
}
