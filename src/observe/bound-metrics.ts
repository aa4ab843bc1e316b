/**
 * A counter and a histogram for the metrics every job updates. prom-client's own hash the label
 * values, validate the label names and look the series up on every call (~0.6 µs an increment,
 * ~1 µs an observation; five of them per stage execution); these resolve a series once, keep
 * its values in plain numbers and typed arrays, and give prom-client's Registry, which
 * registers, formats and serves them like its own, the same values at scrape time: series
 * labels after `le`, cumulative buckets, `+Inf`, `_sum` and `_count`, as prom-client writes
 * them.
 */
import type { Registry } from 'prom-client';

/** One series of a {@link BoundCounter}. */
export interface CounterSeries {
  inc(value?: number): void;
}

/** One series of a {@link BoundHistogram}. */
export interface HistogramSeries {
  observe(value: number): void;
}

/** What prom-client's Registry reads from a metric (`get()`, as its own metrics answer). */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface Options<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}

/**
 * What both kinds share: the registration, and the series by their label values, created on
 * first use. A series' key is its values in label order, each ended by NUL (the values here are
 * pipeline, stage, queue, cache and status names). A metric without labels has its one series
 * from the start, as prom-client's have.
 */
abstract class BoundMetric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: string;
  private readonly labelNames: readonly L[];
  private readonly table = new Map<string, { labels: Record<L, string>; series: S }>();

  constructor(
    options: Options<L>,
    private readonly create: () => S,
  ) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    if (options.labelNames.length === 0) this.resolve({} as Record<L, string>);
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  /** The series of `labels`, created on first use. */
  protected resolve(labels: Record<L, string>): S {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let entry = this.table.get(key);
    if (entry === undefined) {
      // Copied, in label order: the caller's object may be reused or changed afterwards.
      const own = {} as Record<L, string>;
      for (const name of this.labelNames) own[name] = String(labels[name]);
      entry = { labels: own, series: this.create() };
      this.table.set(key, entry);
    }
    return entry.series;
  }

  /** Each series' exported values (as prom-client's `get()` gives them). */
  protected abstract valuesOf(labels: Record<L, string>, series: S): MetricValue[];

  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values: MetricValue[] = [];
    for (const { labels, series } of this.table.values()) values.push(...this.valuesOf(labels, series));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /**
   * Zeroes every series (what prom-client's Registry `resetMetrics()` calls). Unlike prom-client's
   * metrics the series stay, at zero: a handler holding one from `series()` keeps counting into
   * what is exported.
   */
  reset(): void {
    for (const { series } of this.table.values()) this.clearSeries(series);
  }

  /** Sets `series` back to no updates. */
  protected abstract clearSeries(series: S): void;
}

interface CounterState extends CounterSeries {
  value: number;
}

/** A monotonic counter whose series are resolved once (`series(labels)`) and then only added to. */
export class BoundCounter<L extends string> extends BoundMetric<L, CounterState> {
  readonly type = 'counter';

  constructor(options: Options<L>) {
    super(options, () => ({
      value: 0,
      inc(value = 1) {
        // A negative or non-finite amount is dropped, as the sample of a broken caller.
        if (value >= 0 && Number.isFinite(value)) this.value += value;
      },
    }));
  }

  /** The series of `labels` (created at zero on first use). */
  series(labels: Record<L, string>): CounterSeries {
    return this.resolve(labels);
  }

  /** Adds `value` (default 1) to the series of `labels`; without labels, to the counter's one series. */
  inc(labels?: Record<L, string> | number, value?: number): void {
    if (typeof labels === 'object') this.resolve(labels).inc(value);
    else this.resolve({} as Record<L, string>).inc(labels);
  }

  protected valuesOf(labels: Record<L, string>, series: CounterState): MetricValue[] {
    return [{ labels: { ...labels }, value: series.value }];
  }

  protected clearSeries(series: CounterState): void {
    series.value = 0;
  }
}

interface HistogramState extends HistogramSeries {
  /** One count per bucket (not cumulative), and one past the last (+Inf). */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** A histogram whose series are resolved once (`series(labels)`) and then only observed. */
export class BoundHistogram<L extends string> extends BoundMetric<L, HistogramState> {
  readonly type = 'histogram';
  private readonly upperBounds: Float64Array;

  constructor(options: Options<L> & { buckets: readonly number[] }) {
    const bounds = Float64Array.from([...options.buckets].sort((a, b) => a - b));
    super(options, () => ({
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      observe(value: number) {
        if (!Number.isFinite(value)) return;
        let i = 0;
        while (i < bounds.length && value > (bounds[i] as number)) i++;
        (this.counts[i] as number) += 1;
        this.sum += value;
        this.count += 1;
      },
    }));
    this.upperBounds = bounds;
  }

  /** The series of `labels` (created empty on first use). */
  series(labels: Record<L, string>): HistogramSeries {
    return this.resolve(labels);
  }

  observe(labels: Record<L, string>, value: number): void {
    this.resolve(labels).observe(value);
  }

  /** Creates the series of `labels` with no observations, so it is exported from the first scrape. */
  zero(labels: Record<L, string>): void {
    this.resolve(labels);
  }

  protected valuesOf(labels: Record<L, string>, series: HistogramState): MetricValue[] {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    let cumulative = 0;
    for (let i = 0; i < this.upperBounds.length; i++) {
      cumulative += series.counts[i] as number;
      values.push({ labels: { le: this.upperBounds[i] as number, ...labels }, value: cumulative, metricName: bucketName });
    }
    values.push({ labels: { le: '+Inf', ...labels }, value: series.count, metricName: bucketName });
    values.push({ labels: { ...labels }, value: series.sum, metricName: `${this.name}_sum` });
    values.push({ labels: { ...labels }, value: series.count, metricName: `${this.name}_count` });
    return values;
  }

  protected clearSeries(series: HistogramState): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
  }
}
