/**
 * A bad kiln.yaml stops `kiln serve` before it listens, listing every problem with its file, line
 * and field path, and exiting with the usage code.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { runKiln } from './kiln-process.ts';

test('kiln serve with a wrong type, an unknown stage and a negative duration fails listing all three with lines', { timeout: 30_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-config-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'kiln.yaml'),
    [
      'pipelines:', //                    1
      '  demo.sleep:', //                 2
      '    stages:', //                   3
      '      prepare:', //                4
      '        maxAttempts: "three"', //  5  wrong type
      '      procss:', //                 6  unknown stage
      '        timeoutMs: 1000', //       7
      '      finish:', //                 8
      '        leaseMs: -5s', //          9  negative duration
      '',
    ].join('\n'),
  );
  const result = await runKiln(['serve', '--port', '0', '--db', 'k.db'], dir);
  assert.equal(result.code, ExitCode.usage);
  const lines = result.stderr.split('\n');
  assert.match(lines[0] ?? '', /^kiln: CONFIG_INVALID: invalid configuration \(3 problems\)/);
  assert.ok(lines.some((l) => /kiln\.yaml:5:22 pipelines\.demo\.sleep\.stages\.prepare\.maxAttempts: /.test(l)), result.stderr);
  assert.ok(lines.some((l) => /kiln\.yaml:6:7 pipelines\.demo\.sleep\.stages\.procss: .*unknown stage/i.test(l)), result.stderr);
  assert.ok(lines.some((l) => /kiln\.yaml:9:18 pipelines\.demo\.sleep\.stages\.finish\.leaseMs: /.test(l)), result.stderr);
});
