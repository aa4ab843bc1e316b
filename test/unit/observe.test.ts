import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { context, ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { ValidationError } from '../../src/core/errors.ts';
import type { Logger } from '../../src/core/logger.ts';
import { createLogger } from '../../src/observe/logger.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createIdGenerator } from '../../src/core/ids.ts';
import { currentTraceId, formatTraceparent, mintSpanContext, parseTraceparent, runTraceContext, withSpan } from '../../src/engine/tracing.ts';

function capture(): { stream: PassThrough; text: () => string; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** What an OpenTelemetry SDK registers: a context manager that follows async calls. */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

describe('logger', () => {
  test('writes one JSON object per line with pid, hostname, ISO time, level and child bindings', async () => {
    const out = capture();
    const logger = createLogger({ level: 'info', destination: out.stream });
    // The pino logger is usable wherever the core Logger port is expected.
    const port: Logger = logger.child({ pipeline: 'demo', run_id: 'run_1' });
    port.info({ stage: 'a' }, 'stage started');
    port.debug('not at info level');
    logger.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const lines = out.lines();
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line['msg'], 'stage started');
    assert.equal(line['pid'], process.pid);
    assert.equal(typeof line['hostname'], 'string');
    assert.equal(line['level'], 30);
    assert.equal(line['pipeline'], 'demo');
    assert.equal(line['run_id'], 'run_1');
    assert.equal(line['stage'], 'a');
    assert.match(String(line['time']), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test('on a terminal lines are readable text (pino-pretty); elsewhere JSON; log.format overrides either way', async () => {
    const terminal = capture();
    Object.assign(terminal.stream, { isTTY: true });
    createLogger({ level: 'info', destination: terminal.stream }).info({ run_id: 'run_1' }, 'stage started');
    const forcedJson = capture();
    Object.assign(forcedJson.stream, { isTTY: true });
    createLogger({ level: 'info', destination: forcedJson.stream, format: 'json' }).info('as json');
    const forcedPretty = capture();
    createLogger({ level: 'info', destination: forcedPretty.stream, format: 'pretty' }).warn('as text');
    await new Promise((resolve) => setImmediate(resolve));
    // Colored on a terminal: compare without the escape codes.
    const plain = terminal.text().replace(/\x1b\[[0-9;]*m/g, '');
    assert.notEqual(plain, terminal.text(), 'a terminal gets colors');
    assert.match(plain, /INFO: stage started/);
    assert.match(plain, /run_id: "run_1"/);
    assert.throws(() => JSON.parse(terminal.text()));
    assert.equal(forcedJson.lines()[0]?.['msg'], 'as json');
    assert.match(forcedPretty.text(), /WARN.*as text/);
  });

  test('silent logs nothing and an unknown level is a ValidationError', async () => {
    const out = capture();
    createLogger({ level: 'silent', destination: out.stream }).error('dropped');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(out.lines(), []);
    assert.throws(() => createLogger({ level: 'loud' }), ValidationError);
  });
});

describe('tracing (API only, no SDK)', () => {
  const ids = createIdGenerator(systemClock);

  test('withSpan runs the function, passes results and errors through, and no trace id is active', async () => {
    assert.equal(await withSpan('kiln.test', async () => currentTraceId() ?? 'none'), 'none');
    await assert.rejects(
      withSpan('kiln.test', async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(currentTraceId(), undefined);
  });

  test('parseTraceparent accepts W3C headers and refuses invalid ones; formatTraceparent writes version 00', () => {
    const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const parsed = parseTraceparent(header);
    assert.deepEqual(parsed, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
    assert.equal(formatTraceparent(parsed!), header);
    assert.equal(parseTraceparent(header.toUpperCase())?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(formatTraceparent(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00')!).slice(-2), '00');
    // A later version may append fields; version 00 may not.
    assert.ok(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'));
    for (const bad of [
      undefined,
      '',
      `${header}-extra`,
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
    ]) {
      assert.equal(parseTraceparent(bad), undefined, String(bad));
    }
  });

  test('mintSpanContext gives fresh valid ids, or keeps a given trace id', () => {
    const a = mintSpanContext(ids);
    const b = mintSpanContext(undefined);
    for (const sc of [a, b]) {
      assert.match(sc.traceId, /^[0-9a-f]{32}$/);
      assert.match(sc.spanId, /^[0-9a-f]{16}$/);
    }
    assert.notEqual(a.traceId, b.traceId);
    assert.equal(mintSpanContext(ids, '4bf92f3577b34da6a3ce929d0e0e4736').traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  });

  test('with a context manager, the context continued from a run carries its trace id, stored parent or not', async () => {
    const manager = new AsyncLocalContextManager();
    assert.ok(context.setGlobalContextManager(manager));
    try {
      const run = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceParent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
      const inside = (parent: Context) =>
        context.with(parent, async () => {
          await Promise.resolve();
          return currentTraceId();
        });
      assert.equal(await inside(runTraceContext(run, ids)), run.traceId);
      // Runs stored before trace parents were kept continue their trace id under a made-up parent.
      assert.equal(await inside(runTraceContext({ traceId: run.traceId, traceParent: null }, ids)), run.traceId);
      assert.equal(currentTraceId(), undefined);
    } finally {
      context.disable();
    }
  });
});
