/**
 * Loading a store's schema migrations: numbered `.sql` files named `NNNN_verb_noun.sql` in one
 * folder, append-only, versions 1..n without gaps. How they are applied (transaction, lock,
 * `schema_version` table) is each store's own; what a migration file is, and which files make
 * a valid set, is the same for every SQL store and lives here.
 *
 * No driver import: only `node:fs`, to read the files shipped next to the store's code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { SchemaVersionError } from '../../core/errors.ts';

/** One migration file. */
export interface Migration {
  /** The file's `NNNN` prefix; 1 for the first migration. */
  version: number;
  /** The file name, as recorded in `schema_version.name`. */
  name: string;
  /** The whole file: one or more statements, run as one script. */
  sql: string;
}

const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;

/**
 * Reads every `.sql` file of `folder` (a `file:` URL ending in `/`, built with
 * `new URL('./migrations/', import.meta.url)` so it resolves next to the code) and returns them
 * in version order. Throws `SchemaVersionError` for a misnamed file or when the versions are not
 * exactly 1..n: "applied up to n" must mean "has all of 1..n".
 */
export function readMigrationFiles(folder: URL): Migration[] {
  const migrations = readdirSync(folder)
    .filter((file) => file.endsWith('.sql'))
    .map((file): Migration => {
      const match = FILE_NAME.exec(file);
      if (!match?.[1]) throw new SchemaVersionError(`migration file name ${file} does not match NNNN_verb_noun.sql`);
      return { version: Number(match[1]), name: file, sql: readFileSync(new URL(file, folder), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new SchemaVersionError(`migration ${m.name} should have version ${i + 1}`);
  });
  return migrations;
}

/** The migrations of one folder, read on first use and kept (see {@link createMigrationSource}). */
export interface MigrationSource {
  /** The migration files, in version order; read and checked on the first call. */
  load(): readonly Migration[];
  /** The highest schema version this code knows: the number of migration files. */
  latestVersion(): number;
}

/**
 * A {@link MigrationSource} over `folder` (see {@link readMigrationFiles}). Nothing is read until
 * the first call, so importing a store touches no file.
 */
export function createMigrationSource(folder: URL): MigrationSource {
  let loaded: readonly Migration[] | undefined;
  const load = (): readonly Migration[] => (loaded ??= readMigrationFiles(folder));
  return { load, latestVersion: () => load().length };
}
