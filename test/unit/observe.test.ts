import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { context, ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { ValidationError } from '../../src/core/errors.ts';
import type { Logger } from '../../src/core/logger.ts';
import { createLogger } from '../../src/observe/logger.ts';
import { currentTraceId, newTraceId, withSpan } from '../../src/observe/tracing.ts';

function capture(): { stream: PassThrough; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return {
    stream,
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

  test('silent logs nothing and an unknown level is a ValidationError', async () => {
    const out = capture();
    createLogger({ level: 'silent', destination: out.stream }).error('dropped');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(out.lines(), []);
    assert.throws(() => createLogger({ level: 'loud' }), ValidationError);
  });
});

describe('tracing', () => {
  test('without an SDK, withSpan runs the function, passes results and errors through, and no trace id is active', async () => {
    assert.equal(await withSpan('kiln.test', { a: 1 }, async () => currentTraceId() ?? 'none'), 'none');
    await assert.rejects(
      withSpan('kiln.test', {}, async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(currentTraceId(), undefined);
  });

  test('newTraceId gives a fresh random 32-hex id when no span is active', () => {
    const a = newTraceId();
    const b = newTraceId();
    assert.match(a, /^[0-9a-f]{32}$/);
    assert.notEqual(a, b);
  });

  test('with a context manager, a span continued from a stored trace id exposes that id inside', async () => {
    const manager = new AsyncLocalContextManager();
    assert.ok(context.setGlobalContextManager(manager));
    try {
      const traceId = newTraceId();
      const seen = await withSpan('kiln.job', { stage: 'a' }, async () => {
        await Promise.resolve();
        return [currentTraceId(), newTraceId()];
      }, { traceId });
      assert.deepEqual(seen, [traceId, traceId]);
      assert.equal(currentTraceId(), undefined);
    } finally {
      context.disable();
    }
  });
});
