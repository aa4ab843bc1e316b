/**
 * An SVG render can be stopped: it runs in a process of its own, killed when the attempt's signal
 * aborts or the render outlives its budget, so no CPU is spent on an attempt that has ended. The
 * tests look for the render process in /proc (children of this process running the render
 * script): it must exist while rendering (the fault lands on a live render) and be gone after.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { StageFailure } from '../../../src/core/errors.ts';
import { renderSvgStoppable } from '../../../src/pipelines/thumbnails/media/svg-render.ts';
import { blurBombSvg } from '../../support/asset-fixtures.ts';

/** Pids of this process's children that run the SVG render script. */
function renderProcesses(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('svg-render-child.mjs')) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Resolves once a render process exists (the render is under way); fails after 10 s. */
async function renderStarted(): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = renderProcesses();
    if (pids.length > 0) return pids;
    if (Date.now() > deadline) throw new Error('no render process appeared');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('stoppable SVG render', { skip: process.platform !== 'linux' ? 'reads /proc' : undefined }, () => {
  test('an SVG that outlives its budget fails as permanent ASSET_TOO_COMPLEX, and its render process is gone', async () => {
    const rendering = renderSvgStoppable(blurBombSvg(), 2048, { budgetMs: 1_500 });
    const pids = await renderStarted();
    await assert.rejects(rendering, (err: unknown) => {
      assert.ok(err instanceof StageFailure, String(err));
      assert.equal(err.code, 'ASSET_TOO_COMPLEX');
      assert.equal(err.errorClass, 'permanent');
      assert.deepEqual(err.details, { budgetMs: 1_500 });
      return true;
    });
    assert.deepEqual(renderProcesses(), []);
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `render process ${pid} still exists`);
  });

  test("aborting the attempt's signal stops the render at once with the abort reason", async () => {
    const controller = new AbortController();
    const reason = new Error('stage timed out');
    const rendering = renderSvgStoppable(blurBombSvg(), 2048, { budgetMs: 600_000, signal: controller.signal });
    const pids = await renderStarted();
    controller.abort(reason);
    await assert.rejects(rendering, (err: unknown) => err === reason);
    assert.deepEqual(renderProcesses(), []);
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  });

  test('a render within its budget answers, and leaves no process behind', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10" fill="#f00"/></svg>');
    const rendered = await renderSvgStoppable(svg, 64, { budgetMs: 30_000 });
    assert.deepEqual([rendered.width, rendered.height], [64, 32]);
    assert.deepEqual(renderProcesses(), []);
  });
});
