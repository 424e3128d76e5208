// Counters and histograms for the per-request and per-command hot path. prom-client validates
// and hashes the label set on every inc()/observe(), even through labels() children (about
// 1 µs each on this machine); here a caller holds a series object, and recording is a few
// additions. prom-client still formats them: each metric hands its values over at scrape time
// through the same get() interface prom-client's own metrics implement.
import type { Registry } from 'prom-client';

type Labels = Readonly<Record<string, string>>;

interface MetricValue {
  readonly metricName?: string;
  readonly labels: Record<string, string | number>;
  readonly value: number;
}

/** The part of prom-client's metric interface that Registry uses. */
interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): { name: string; help: string; type: string; values: MetricValue[]; aggregator: 'sum' };
  reset(): void;
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  return Object.fromEntries(names.map((name, i) => [name, values[i] ?? '']));
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

export class HistogramSeries {
  sum = 0;
  count = 0;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  readonly counts: Float64Array;
  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

abstract class HotMetric<S> implements ScrapedMetric {
  protected readonly all = new Map<string, S>();
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;
  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    // Registry accepts any object with prom-client's metric interface; its type lists the
    // built-in classes only.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }
  protected abstract create(labels: Labels): S;
  /** The series for these label values (in labelNames order); callers keep it to skip the lookup. */
  series(...values: string[]): S {
    const id = values.join('\u0000');
    let series = this.all.get(id);
    if (!series) {
      series = this.create(labelsOf(this.labelNames, values));
      this.all.set(id, series);
    }
    return series;
  }
  /** Zeroes every series rather than dropping it: callers may hold on to their series. */
  reset(): void {
    for (const series of this.all.values()) this.zero(series);
  }
  protected abstract zero(series: S): void;
  protected abstract values(): MetricValue[];
  get() {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator };
  }
}

export class HotCounter extends HotMetric<CounterSeries> {
  readonly type = 'counter' as const;
  protected create(labels: Labels) {
    return new CounterSeries(labels);
  }
  protected zero(series: CounterSeries) {
    series.value = 0;
  }
  protected values(): MetricValue[] {
    return [...this.all.values()].map((s) => ({ labels: { ...s.labels }, value: s.value }));
  }
}

export class HotHistogram extends HotMetric<HistogramSeries> {
  readonly type = 'histogram' as const;
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }
  protected create(labels: Labels) {
    return new HistogramSeries(labels, this.bounds);
  }
  protected zero(series: HistogramSeries) {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
  }
  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.all.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        out.push({ metricName: bucket, labels: { ...s.labels, le }, value: cumulative });
      });
      out.push({ metricName: bucket, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      out.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      out.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    return out;
  }
}
