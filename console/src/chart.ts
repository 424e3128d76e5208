// The console's line charts (uPlot): axes and legend in 24-hour UTC like the page's text, and
// a legend that always shows values: the hovered point's, and the latest point's when the
// pointer is elsewhere (uPlot's own legend shows `--` then). The chart's box follows the
// page's width. Hidden from screen readers by its caller: the numbers are in the text beside it.
import uPlot from 'uplot';

export interface LineSeries {
  label: string;
  stroke: string;
  fill?: string;
  /** The value as the legend shows it (a unit, rounding). */
  format?: (v: number) => string;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** 14:05 (minutes) or 11-28 (days), in UTC. */
export function utcLabel(ts: number, unit: 'minute' | 'day'): string {
  const d = new Date(ts * 1000);
  return unit === 'minute' ? `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` : `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** The last index at which any series has a value (the latest point), or the last index. */
function latest(data: uPlot.AlignedData): number {
  for (let i = data[0].length - 1; i >= 0; i--) if (data.slice(1).some((s) => s[i] !== null && s[i] !== undefined)) return i;
  return Math.max(0, data[0].length - 1);
}

export function lineChart(el: HTMLElement, opts: { data: uPlot.AlignedData; series: LineSeries[]; unit: 'minute' | 'day'; yLabel?: string; height: number; maxWidth: number }): () => void {
  const width = () => Math.max(260, Math.min(el.clientWidth || 560, opts.maxWidth));
  const last = latest(opts.data);
  const showLatest = (u: uPlot) => {
    if (u.cursor.idx === null || u.cursor.idx === undefined) u.setLegend({ idx: last }, false);
  };
  const plot = new uPlot(
    {
      width: width(),
      height: opts.height,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      series: [
        { label: opts.unit === 'minute' ? 'UTC' : 'UTC day', value: (_u, ts) => (ts === null ? '' : `${opts.unit === 'day' ? new Date(ts * 1000).toISOString().slice(0, 10) : utcLabel(ts, 'minute')}`) },
        ...opts.series.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          fill: s.fill,
          width: 2,
          spanGaps: true,
          points: { show: true, size: 4 },
          value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? 'none' : (s.format ?? ((x: number) => x.toLocaleString('en')))(v)),
        })),
      ],
      axes: [
        { values: (_u, splits) => splits.map((ts) => utcLabel(ts, opts.unit)), stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,.18)' }, ticks: { stroke: 'rgba(128,128,128,.3)' } },
        { size: 60, label: opts.yLabel, stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,.18)' }, ticks: { stroke: 'rgba(128,128,128,.3)' } },
      ],
      legend: { show: true, live: true },
      hooks: { ready: [showLatest], setCursor: [showLatest] },
    },
    opts.data,
    el,
  );
  const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: opts.height }));
  resize.observe(el);
  return () => {
    resize.disconnect();
    plot.destroy();
  };
}
