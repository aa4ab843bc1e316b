/**
 * The schema the store lives in, and the names derived from it. The schema name is spliced
 * into SQL text (identifiers cannot be bound as parameters), so it is validated here once and
 * only the quoted form is ever used.
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../../core/errors.ts';

/** Default schema of the store's tables. */
export const DEFAULT_SCHEMA = 'kiln';

/** Lower-case letters, digits and `_`, not starting with a digit, at most 63 bytes (NAMEDATALEN - 1). */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** PostgreSQL reserves `pg_*` for system schemas; information_schema is the standard's own. */
const RESERVED_SCHEMA = /^(pg_.*|information_schema)$/;

/** Returns `schema` when it is a usable schema name; `ValidationError` otherwise. */
export function validateSchemaName(schema: string): string {
  if (!SCHEMA_NAME_PATTERN.test(schema) || RESERVED_SCHEMA.test(schema)) {
    throw new ValidationError(
      `invalid postgres schema name ${JSON.stringify(schema)}: must match ${String(SCHEMA_NAME_PATTERN)} and not be pg_* or information_schema`,
      { details: { schema } },
    );
  }
  return schema;
}

/** `"name"` for a name validated by {@link validateSchemaName} (which admits no quote). */
export function quoteIdentifier(name: string): string {
  return `"${name}"`;
}

/** Longest channel name PostgreSQL accepts (NAMEDATALEN - 1 bytes). */
const MAX_CHANNEL_BYTES = 63;

/**
 * The LISTEN/NOTIFY channel of a schema: `<schema>_wake`, or — when that would be too long —
 * the schema's first 46 characters, `_`, and 16 hex digits of its sha256 (still one channel per
 * schema, still readable in `pg_stat_activity`).
 */
export function wakeChannel(schema: string): string {
  const plain = `${schema}_wake`;
  if (plain.length <= MAX_CHANNEL_BYTES) return plain;
  const digest = createHash('sha256').update(schema).digest('hex').slice(0, 16);
  return `${schema.slice(0, MAX_CHANNEL_BYTES - 17)}_${digest}`;
}
