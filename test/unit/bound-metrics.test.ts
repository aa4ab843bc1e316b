import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { BoundCounter, BoundHistogram } from '../../src/observe/bound-metrics.ts';

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];
const LABELS = ['pipeline', 'stage'] as const;

/** An observation: which series (two label values from small sets, so series repeat) and a value. */
const observation = fc.record({
  pipeline: fc.constantFrom('qr-code', 'assets', 'a"b\\c'),
  stage: fc.constantFrom('render', 'publish', 'x\ny'),
  value: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...BUCKETS), fc.constant(0)),
  viaSeries: fc.boolean(),
});

/** A registry's metrics as JSON, each value as labels, value and series name. */
async function asJson(registry: Registry): Promise<unknown> {
  return (await registry.getMetricsAsJSON()).map((m) => ({
    name: m.name,
    help: m.help,
    type: m.type,
    values: m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: (v as { metricName?: string }).metricName })),
  }));
}

test("bound counters and histograms expose exactly what prom-client's would for the same updates", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (updates) => {
      const theirs = new Registry();
      const ours = new Registry();
      const counter = new Counter({ name: 't_total', help: 'help', labelNames: LABELS, registers: [theirs] });
      const histogram = new Histogram({ name: 't_seconds', help: 'help', labelNames: LABELS, buckets: BUCKETS, registers: [theirs] });
      const bare = new Counter({ name: 'bare_total', help: 'no labels', registers: [theirs] });
      const boundCounter = new BoundCounter({ name: 't_total', help: 'help', labelNames: LABELS, registers: [ours] });
      const boundHistogram = new BoundHistogram({ name: 't_seconds', help: 'help', labelNames: LABELS, buckets: BUCKETS, registers: [ours] });
      const boundBare = new BoundCounter({ name: 'bare_total', help: 'no labels', labelNames: [], registers: [ours] });
      // A zeroed series is exported before any observation, on both.
      histogram.zero({ pipeline: 'zeroed', stage: 'z' });
      boundHistogram.zero({ pipeline: 'zeroed', stage: 'z' });
      for (const { pipeline, stage, value, viaSeries } of updates) {
        counter.inc({ pipeline, stage }, value);
        histogram.observe({ pipeline, stage }, value);
        bare.inc(2);
        if (viaSeries) {
          boundCounter.series({ pipeline, stage }).inc(value);
          boundHistogram.series({ pipeline, stage }).observe(value);
        } else {
          boundCounter.inc({ pipeline, stage }, value);
          boundHistogram.observe({ pipeline, stage }, value);
        }
        boundBare.inc(2);
      }
      assert.equal(await ours.metrics(), await theirs.metrics());
      // The JSON form too (what the dashboard's cache view reads), exemplars aside (none here).
      assert.deepEqual(await asJson(ours), await asJson(theirs));
    }),
    { numRuns: 200 },
  );
});

test('a bound series takes no label object it is handed later: its labels are copied on first use', async () => {
  const registry = new Registry();
  const counter = new BoundCounter({ name: 'c_total', help: 'help', labelNames: ['queue'], registers: [registry] });
  const labels = { queue: 'a' };
  counter.inc(labels);
  labels.queue = 'b';
  counter.inc(labels);
  assert.match(await registry.metrics(), /c_total\{queue="a"\} 1\nc_total\{queue="b"\} 1/);
});

test('resetMetrics zeroes every series and a series handed out before it still counts into /metrics', async () => {
  const registry = new Registry();
  const counter = new BoundCounter({ name: 'r_total', help: 'help', labelNames: ['queue'], registers: [registry] });
  const histogram = new BoundHistogram({ name: 'r_seconds', help: 'help', labelNames: ['queue'], buckets: [1], registers: [registry] });
  const held = counter.series({ queue: 'a' });
  const observed = histogram.series({ queue: 'a' });
  held.inc(3);
  observed.observe(0.5);
  registry.resetMetrics();
  assert.match(await registry.metrics(), /r_total\{queue="a"\} 0\n[\s\S]*r_seconds_count\{queue="a"\} 0/);
  held.inc();
  observed.observe(2);
  const text = await registry.metrics();
  assert.match(text, /r_total\{queue="a"\} 1\n/);
  assert.match(text, /r_seconds_bucket\{le="1",queue="a"\} 0\nr_seconds_bucket\{le="\+Inf",queue="a"\} 1\nr_seconds_sum\{queue="a"\} 2\nr_seconds_count\{queue="a"\} 1/);
});
