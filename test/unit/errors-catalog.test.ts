import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { EXIT_CODES, ExitCode, exitCodeFor } from '../../src/cli/exit-codes.ts';
import {
  StoreUnavailableError,
  ConfigError,
  ConflictError,
  ERROR_CODES,
  LeaseLostError,
  NotFoundError,
  type PipelineError,
  SchemaVersionError,
  StageFailure,
  TenantMismatchError,
  UnprocessableError,
  ValidationError,
  type ErrorCode,
} from '../../src/core/errors.ts';

interface DocRow {
  code: string;
  status: number;
  exit: number;
  meaning: string;
  action: string;
}

/** The rows of the table under `## Catalog` in docs/errors.md. */
function readCatalog(): DocRow[] {
  const text = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const section = text.split(/^## Catalog\s*$/m)[1];
  assert.ok(section, 'docs/errors.md has a "## Catalog" section');
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2) // header and separator
    .map((line) => line.slice(1, line.trimEnd().length - 1).split(' | ').map((cell) => cell.trim()));
  return rows.map((cells) => {
    assert.equal(cells.length, 5, `a catalog row has 5 cells: ${cells.join(' | ')}`);
    const [code, status, exit, meaning, action] = cells as [string, string, string, string, string];
    const match = /^`([A-Z][A-Z0-9_]*)`$/.exec(code);
    assert.ok(match?.[1], `code cell is a backticked SCREAMING_SNAKE code: ${code}`);
    return { code: match[1], status: Number(status), exit: Number(exit), meaning, action };
  });
}

/** The documented rule the exit-code table follows. */
function expectedExit(code: ErrorCode): number {
  const status: number = ERROR_CODES[code].status;
  if (code === 'CONFIG_INVALID') return ExitCode.usage;
  if (status === 404) return ExitCode.notFound;
  if (status === 409) return ExitCode.conflict;
  if (status === 503 || status === 429) return ExitCode.unavailable;
  if (status >= 400 && status < 500) return ExitCode.usage;
  return ExitCode.failure;
}

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('error catalog', () => {
  test('docs/errors.md lists every code exactly once and nothing else', () => {
    const documented = readCatalog().map((r) => r.code);
    assert.equal(new Set(documented).size, documented.length, 'no code is documented twice');
    assert.deepEqual([...documented].sort(), [...codes].sort());
  });

  test('each documented HTTP status matches ERROR_CODES', () => {
    for (const row of readCatalog()) assert.equal(row.status, ERROR_CODES[row.code as ErrorCode].status, row.code);
  });

  test('each documented exit code matches the CLI table', () => {
    for (const row of readCatalog()) {
      assert.equal(row.exit, EXIT_CODES[row.code as ErrorCode], row.code);
      assert.equal(exitCodeFor(row.code), row.exit, row.code);
    }
  });

  test('each code is explained and has advice', () => {
    for (const row of readCatalog()) {
      assert.ok(row.meaning.length > 15, `${row.code} meaning`);
      assert.ok(row.action.length > 10, `${row.code} what to do`);
    }
  });

  test('the exit table covers exactly the catalog and follows the status rule', () => {
    assert.deepEqual(Object.keys(EXIT_CODES).sort(), [...codes].sort());
    for (const code of codes) assert.equal(EXIT_CODES[code], expectedExit(code), code);
  });

  test('codes outside the catalog exit 1', () => {
    assert.equal(exitCodeFor('EADDRINUSE'), ExitCode.failure);
    assert.equal(exitCodeFor('toString'), ExitCode.failure);
    assert.equal(exitCodeFor(''), ExitCode.failure);
  });

  test('error classes carry the HTTP status their code has in ERROR_CODES', () => {
    const samples: PipelineError[] = [
      new ConfigError([]),
      new ValidationError('bad'),
      new UnprocessableError('IDEMPOTENCY_KEY_REUSED', 'reused'),
      new NotFoundError('run', 'run_1'),
      new TenantMismatchError('tenant-b', 'tenant-a'),
      new ConflictError('INVALID_TRANSITION', 'no'),
      new ConflictError('RUN_COMPENSATED', 'no'),
      new ConflictError('LOCK_HELD', 'no'),
      new LeaseLostError('job_1'),
      new StoreUnavailableError('down'),
      new SchemaVersionError('newer'),
      StageFailure.retryable('x'),
    ];
    for (const err of samples) {
      assert.ok(err.code in ERROR_CODES, `${err.code} is catalogued`);
      assert.equal(err.statusCode, ERROR_CODES[err.code as ErrorCode].status, err.code);
    }
  });

  test('a ValidationError with a 413/415 code carries that status', () => {
      for (const code of ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const) {
        assert.equal(new ValidationError('x', { code }).statusCode, ERROR_CODES[code].status, code);
      }
  });
});
