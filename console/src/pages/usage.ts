// A workspace's usage: requests and 429s per day as a chart (uPlot), the same numbers as a
// table for screen readers and copying, and the player count.
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import { lineChart } from '../chart.js';
import { html } from '../ui.js';

const count = (n: number, noun: string) => `${n.toLocaleString('en')} ${noun}${n === 1 ? '' : 's'}`;

export interface UsageReport {
  days: { date: string; requests: number; limited: number }[];
  totals: { requests: number; limited: number };
  players: number;
}

function Chart(props: { days: UsageReport['days'] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const days = [...props.days].reverse();
    const data: uPlot.AlignedData = [
      days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      days.map((d) => d.requests),
      days.map((d) => d.limited),
    ];
    return lineChart(el, {
      data,
      unit: 'day',
      height: 220,
      maxWidth: 1240,
      series: [
        { label: 'Requests', stroke: '#0b5cad', fill: 'rgba(11,92,173,0.08)' },
        { label: '429s', stroke: '#a4161a' },
      ],
    });
  }, [props.days]);
  return html`<div class="chart" ref=${box} aria-hidden="true"></div>`;
}

export function UsageSection(props: { usage: UsageReport | undefined }) {
  const usage = props.usage;
  return html`<section aria-labelledby="usage-h">
    <h2 id="usage-h">Usage (UTC days)</h2>
    ${usage
      ? html`<p>${count(usage.totals.requests, 'request')}, ${usage.totals.limited.toLocaleString('en')} of them refused with 429,
          over ${usage.days.length} days; ${count(usage.players, 'player')} with data.</p>
        <figure>
          <${Chart} days=${usage.days} />
          <figcaption>Requests and 429s per day, the last ${usage.days.length} days.</figcaption>
        </figure>
        <details><summary>The numbers per day</summary>
          <div class="table-wrap"><table>
            <thead><tr><th scope="col">Day</th><th scope="col">Requests</th><th scope="col">429s</th></tr></thead>
            <tbody>${usage.days.map((d) => html`<tr key=${d.date}><td>${d.date}</td><td>${d.requests}</td><td>${d.limited}</td></tr>`)}</tbody>
          </table></div>
        </details>`
      : html`<p role="status">Loading usage…</p>`}
  </section>`;
}
