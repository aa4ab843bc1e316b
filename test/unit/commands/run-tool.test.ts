import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { StageFailure } from '../../../src/index.ts';
import { runTool } from '../../../src/commands/run-tool.ts';
import { isGone } from '../../support/processes.ts';

/** A hanging tool: it ignores SIGTERM, starts a grandchild that does too, reports both pids, then waits forever. */
const HANGING_TOOL = `
trap '' TERM
sleep 1000 &
echo "PROGRESS grandchild $!"
echo "PROGRESS leader $$"
wait
`;

/** Exits at once, leaving a background process behind (its output not on our pipes). */
const LEAVES_A_CHILD = `
sleep 1000 >/dev/null 2>&1 &
echo "PROGRESS leftover $!"
exit 0
`;

const FINISHES = `
echo "PROGRESS 10%"
echo out-line
echo err-line >&2
printf 'PROGRESS 100%%\\r\\n'
printf 'no newline at the end'
exit 3
`;

/** Polls until every pid is gone; SIGKILL is asynchronous, so allow the kernel a moment. */
async function assertAllGone(pids: number[]): Promise<void> {
  const deadline = performance.now() + 5000;
  while (!pids.every(isGone) && performance.now() < deadline) await delay(10);
  for (const pid of pids) assert.ok(isGone(pid), `process ${pid} is gone`);
}

/** The text of the `PROGRESS <text>` lines among `lines`. */
function markersIn(lines: readonly string[]): string[] {
  return lines.filter((l) => l.startsWith('PROGRESS ')).map((l) => l.slice('PROGRESS '.length));
}

function pidsFrom(markers: readonly string[]): number[] {
  return markers.map((m) => /^\w+ (\d+)$/.exec(m)?.[1]).filter((p): p is string => p !== undefined).map(Number);
}

describe('runTool', () => {
  let dir: string;
  const script = (name: string): string => join(dir, name);
  const stray: number[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-tool-'));
    await writeFile(script('hang.sh'), HANGING_TOOL);
    await writeFile(script('leave.sh'), LEAVES_A_CHILD);
    await writeFile(script('finish.sh'), FINISHES);
  });

  after(async () => {
    // Should a test fail half-way, do not leave its sleepers behind.
    for (const pid of stray) if (!isGone(pid)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  test('returns stdout, stderr, the exit code and every stdout line as it arrives', async () => {
    const seen: string[] = [];
    const result = await runTool('sh', [script('finish.sh')], { timeoutMs: 10_000, onLine: (line) => seen.push(line) });
    assert.equal(result.code, 3);
    assert.equal(result.signal, null);
    assert.equal(result.stdout, 'PROGRESS 10%\nout-line\nPROGRESS 100%\r\nno newline at the end');
    assert.equal(result.stderr, 'err-line\n');
    assert.deepEqual(seen, ['PROGRESS 10%', 'out-line', 'PROGRESS 100%', 'no newline at the end']);
    assert.equal(result.truncated, false);
  });

  test('a tool killed by a signal reports it', async () => {
    const result = await runTool('sh', ['-c', 'kill -USR1 $$'], { timeoutMs: 10_000 });
    assert.equal(result.signal, 'SIGUSR1');
    assert.equal(result.code, 128 + 10);
  });

  test('arguments reach the tool as given, and only the given environment', async () => {
    const result = await runTool('sh', ['-c', 'printf "%s|" "$@"; printf "%s" "$ONLY"', 'sh', 'a b', '$(id)', 'x; touch y'], { timeoutMs: 10_000, env: { ONLY: 'yes', PATH: process.env.PATH } });
    assert.equal(result.stdout, 'a b|$(id)|x; touch y|yes');
  });

  test('on timeout kills the whole process group, grandchild included, even if they ignore SIGTERM', async () => {
    const lines: string[] = [];
    const err = await runTool('sh', [script('hang.sh')], { timeoutMs: 300, killGraceMs: 200, onLine: (l) => lines.push(l) }).then(
      () => assert.fail('expected a timeout'),
      (e: unknown) => e,
    );
    const pids = pidsFrom(markersIn(lines));
    stray.push(...pids);
    assert.equal(pids.length, 2, `leader and grandchild reported: ${lines.join(', ')}`);
    assert.ok(err instanceof StageFailure);
    assert.equal(err.code, 'TOOL_TIMEOUT');
    assert.equal(err.retryable, true);
    await assertAllGone(pids);
  });

  test('on abort kills the group and rejects with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    const markers: string[] = [];
    const run = runTool('sh', [script('hang.sh')], {
      timeoutMs: 60_000,
      killGraceMs: 200,
      signal: controller.signal,
      onLine: (l) => {
        markers.push(...markersIn([l]));
        if (markers.length === 2) controller.abort(reason);
      },
    });
    await assert.rejects(run, (e: unknown) => e === reason);
    const pids = pidsFrom(markers);
    stray.push(...pids);
    await assertAllGone(pids);
  });

  test('an already aborted signal rejects without starting the tool', async () => {
    const reason = new Error('too late');
    await assert.rejects(runTool('sh', [script('hang.sh')], { timeoutMs: 1000, signal: AbortSignal.abort(reason) }), (e: unknown) => e === reason);
  });

  test('what a finished tool left running in its group is killed', async () => {
    const result = await runTool('sh', [script('leave.sh')], { timeoutMs: 10_000, killGraceMs: 200 });
    assert.equal(result.code, 0);
    const pids = pidsFrom(markersIn(result.stdout.split('\n')));
    stray.push(...pids);
    assert.equal(pids.length, 1);
    await assertAllGone(pids);
  });

  test('a parent SIGKILLed while its tool runs leaves no process of the tool behind within 2 s', async () => {
    const parentScript = new URL('../../fixtures/commands/run-tool-parent.ts', import.meta.url).pathname;
    const parent = spawn(process.execPath, ['--import', 'tsx', parentScript, script('hang.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const pids = await new Promise<number[]>((resolve, reject) => {
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const found = pidsFrom(markersIn(out.split('\n')));
        if (found.length === 2) resolve(found);
      });
      parent.once('exit', () => reject(new Error(`parent exited early: ${out}`)));
    });
    stray.push(...pids);
    parent.kill('SIGKILL');
    const killedAt = performance.now();
    const deadline = killedAt + 2000;
    while (!pids.every(isGone) && performance.now() < deadline) await delay(10);
    for (const pid of pids) assert.ok(isGone(pid), `process ${pid} is gone within 2 s of the parent's SIGKILL`);
  });

  test('a tool that cannot be started is TOOL_UNAVAILABLE', async () => {
    const err = await runTool(join(dir, 'no-such-tool'), [], { timeoutMs: 1000 }).catch((e: unknown) => e);
    assert.ok(err instanceof StageFailure && err.code === 'TOOL_UNAVAILABLE' && err.errorClass === 'intervention', String(err));
  });

  test('output beyond the cap is cut and flagged: stdout keeps its start, stderr its end', async () => {
    const result = await runTool('sh', ['-c', 'head -c 100000 /dev/zero | tr "\\0" x; (head -c 5000 /dev/zero | tr "\\0" y; echo the-end) >&2'], { timeoutMs: 10_000, maxOutputBytes: 1000 });
    assert.equal(result.stdout.length, 1000);
    assert.equal(result.stderr.length, 1000);
    assert.ok(result.stderr.endsWith('y\nthe-end\n') || result.stderr.endsWith('ythe-end\n'), result.stderr.slice(-20));
    assert.equal(result.truncated, true);
  });
});
