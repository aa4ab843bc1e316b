import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createFakeClock } from '../../src/core/clock.ts';
import { createIdGenerator, idTimeFloor } from '../../src/core/ids.ts';

test('ids from one generator sort in creation order, also within one millisecond', async () => {
  const clock = createFakeClock();
  const ids = createIdGenerator(clock);
  const made: string[] = [];
  for (let i = 0; i < 1_000; i++) {
    const id = ids.next('run');
    made.push(id);
    assert.match(id, /^run_[0-9a-f]{32}$/);
    // Its time part is the millisecond it was made in: idTimeFloor windows find it.
    assert.ok(idTimeFloor('run', clock.now()) <= id && id < idTimeFloor('run', clock.now() + 1), id);
    if (i % 100 === 0) await clock.advance(1);
  }
  assert.deepEqual([...made].sort(), made);
  assert.equal(new Set(made).size, made.length);
});

test('lease tokens are 128-bit hex and do not repeat', () => {
  const ids = createIdGenerator(createFakeClock());
  const tokens = new Set(Array.from({ length: 10_000 }, () => ids.token()));
  assert.equal(tokens.size, 10_000);
  for (const t of [...tokens].slice(0, 5)) assert.match(t, /^[0-9a-f]{32}$/);
});
