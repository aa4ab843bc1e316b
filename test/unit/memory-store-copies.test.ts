/**
 * The memory store's edge: every value crossing it is a deep copy (`copy` in rows.ts, which walks
 * plain records and JSON itself and leaves everything else to `structuredClone`), so a caller
 * that edits what it handed in or got back changes nothing inside the store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../../src/stores/memory/index.ts';
import { copy } from '../../src/stores/memory/rows.ts';
import { claimOne, leaseOf, complete, stageJob, submit } from '../conformance/fixture.ts';

describe('memory store copies', () => {
  it('copy deep-copies records and JSON, keeping an own __proto__ key as a key', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"list":[1,[2,{"c":null}]],"s":"t","n":3}') as Record<string, unknown>;
    const copied = copy(value);
    assert.deepEqual(copied, value);
    assert.notEqual(copied.list, value.list);
    assert.notEqual((copied.list as unknown[])[1], (value.list as unknown[])[1]);
    assert.notEqual(Object.getOwnPropertyDescriptor(copied, '__proto__')?.value, Object.getOwnPropertyDescriptor(value, '__proto__')?.value);
    assert.equal(Object.getPrototypeOf(copied), Object.prototype, 'the __proto__ key did not become the prototype');
    assert.deepEqual(Object.keys(copied), ['__proto__', 'list', 's', 'n']);
    for (const primitive of [null, 0, 'x', true, undefined]) assert.equal(copy(primitive), primitive);
  });

  it('copy hands what it does not walk to structuredClone: Dates and cycles are copied, functions refused', () => {
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    const copied = copy({ at: new Date(5), cyclic });
    assert.ok(copied.at instanceof Date && copied.at.getTime() === 5);
    assert.notEqual(copied.cyclic, cyclic);
    assert.equal(copied.cyclic.self, copied.cyclic);
    assert.throws(() => copy({ f: () => 1 }), { name: 'DataCloneError' });
  });

  it('a caller editing what it handed in or got back changes nothing in the store', async () => {
    const store = createMemoryStore();
    await store.migrate();
    const input = { n: 1, tags: ['x'] };
    const run = await submit(store, { input });
    input.tags.push('handed in, then edited');
    run.status = 'failed';

    const first = await claimOne(store, 'demo.a');
    const output = { list: [1] };
    assert.equal((await complete(store, { lease: leaseOf(first), output, durationMs: 1, next: stageJob('b') })).outcome, 'committed');
    output.list.push(2);
    first.job.state = 'dead';

    const second = await claimOne(store, 'demo.b');
    assert.deepEqual(second.run.input, { n: 1, tags: ['x'] });
    assert.deepEqual(second.outputs, { a: { list: [1] } });
    second.run.input = null;
    (second.outputs.a as { list: number[] }).list.push(3);
    second.job.attempt = 99;

    const detail = await store.reads.getRun(run.id);
    assert.equal(detail?.run.status, 'running');
    assert.deepEqual(detail?.run.input, { n: 1, tags: ['x'] });
    assert.deepEqual(detail?.stages[0]?.output, { list: [1] });
    const job = await store.reads.getJob(second.job.id);
    assert.equal(job?.attempt, 1);
    assert.equal(job?.state, 'leased');
    await store.close();
  });
});
