// /console/overview (the home page; /console/ redirects here): the installation at a glance, from GET /admin/v1/overview, read
// again every 15 seconds while the page is open and visible. Each panel is one component in
// PANELS below; a panel with a list of its own (recent erasures) reads it when the overview does.
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { lineChart } from '../chart.js';
import { adminData } from '../api.js';
import { paths } from '../router.js';
import { ErrorNote, html, Link, Panel, size, time, useLoad } from '../ui.js';
import { progressText, scopeText, type ErasureCounts, type ErasureJob } from './erasures.js';

interface Minute {
  at: string;
  requests: number;
  limited: number;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
}
interface Busy {
  workspaceId: string;
  name: string | null;
  value: number;
}
interface NearQuota {
  workspaceId: string;
  name: string;
  plan: string;
  usedBytes: number;
  quotaBytes: number;
  percent: number;
}
export interface OverviewData {
  at: string;
  minutes: Minute[];
  totals: Omit<Minute, 'at'>;
  memory: { usedBytes: number; maxBytes: number; policy: string; nodes: number };
  instances: Array<{ id: string; host: string; pid: number; startedAt: string; lastSeenAt: string; gateMode: string }>;
  busiestByRequests: Busy[];
  busiestByStorage: Busy[];
  /** Workspaces at or over 80% of their storage quota, fullest first. */
  nearQuota: NearQuota[];
  recentBans: Array<{ address: string; bannedAt: string; source: string; reasons: string[] }>;
  gateMode: string;
}

const REFRESH_MS = 15_000;
const n = (x: number) => x.toLocaleString('en');
const perSecond = (requests: number, minutes: number) => (minutes > 0 ? requests / (minutes * 60) : 0);

/** One uPlot line chart of the hour; hidden from screen readers, whose numbers are in the panel's text. */
function Chart(props: { minutes: Minute[]; series: Array<{ label: string; stroke: string; pick: (m: Minute) => number | null }>; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      props.minutes.map((m) => Date.parse(m.at) / 1000),
      ...props.series.map((s) => props.minutes.map((m) => s.pick(m))),
    ];
    return lineChart(el, {
      data,
      unit: 'minute',
      yLabel: props.unit,
      height: 180,
      maxWidth: 1240,
      series: props.series.map((s) => ({ label: s.label, stroke: s.stroke, format: (v: number) => `${v.toLocaleString('en', { maximumFractionDigits: 2 })} ${props.unit}` })),
    });
  }, [props.minutes]);
  return html`<div class="chart" ref=${box} aria-hidden="true"></div>`;
}

function Traffic(props: { o: OverviewData }) {
  const { minutes, totals } = props.o;
  const last5 = minutes.slice(-5);
  const recent = last5.reduce((a, m) => a + m.requests, 0);
  return html`<${Panel} id="traffic" title="Requests, last hour (UTC)" wide=${true}>
    <p data-testid="traffic-summary"><strong>${perSecond(recent, last5.length).toFixed(1)}</strong> requests a second over the last 5 minutes; ${n(totals.requests)} in the hour, ${n(totals.limited)} refused with 429, ${n(totals.errors)} answered 5xx.</p>
    <${Chart} minutes=${minutes} unit="req/s" series=${[
      { label: 'Requests a second', stroke: '#0b5cad', pick: (m: Minute) => m.requests / 60 },
      { label: '429s a second', stroke: '#8a5a00', pick: (m: Minute) => m.limited / 60 },
      { label: '5xx a second', stroke: '#a4161a', pick: (m: Minute) => m.errors / 60 },
    ]} />
  </${Panel}>`;
}

function Latency(props: { o: OverviewData }) {
  const { totals, minutes } = props.o;
  const ms = (x: number | null) => (x === null ? '—' : `${x} ms`);
  return html`<${Panel} id="latency" title="Latency, last hour" wide=${true}>
    <p>Over the hour: p50 <strong>${ms(totals.p50Ms)}</strong>, p99 <strong>${ms(totals.p99Ms)}</strong> (first middleware to answer, every instance).</p>
    <${Chart} minutes=${minutes} unit="ms" series=${[
      { label: 'p50', stroke: '#1e6b34', pick: (m: Minute) => m.p50Ms },
      { label: 'p99', stroke: '#6f2da8', pick: (m: Minute) => m.p99Ms },
    ]} />
  </${Panel}>`;
}

function Memory(props: { o: OverviewData }) {
  const { usedBytes, maxBytes, policy, nodes } = props.o.memory;
  const share = maxBytes > 0 ? (usedBytes / maxBytes) * 100 : 0;
  return html`<${Panel} id="memory" title="Redis memory">
    ${maxBytes > 0
      ? html`<label for="memory-meter">Used of maxmemory</label>
          <meter id="memory-meter" min="0" max=${maxBytes} value=${usedBytes} high=${maxBytes * 0.8} optimum="0"></meter>
          <p>${size(usedBytes)} of ${size(maxBytes)} (${share.toFixed(share < 10 ? 1 : 0)}%)${nodes > 1 ? `, ${nodes} masters` : ''}; policy ${policy}.</p>`
      : html`<p>${size(usedBytes)} used; <strong>no maxmemory set</strong> (policy ${policy}): Redis grows until the machine runs out. Set maxmemory with noeviction (docs/operations.md).</p>`}
    ${policy && policy !== 'noeviction' ? html`<p class="error">maxmemory-policy ${policy} can evict player data: use noeviction.</p>` : null}
  </${Panel}>`;
}

function Instances(props: { o: OverviewData }) {
  const list = props.o.instances;
  return html`<${Panel} id="instances" title=${`Instances alive: ${list.length}`}>
    ${list.length === 0
      ? html`<p>No instance has reported in the last three intervals (STATS_FLUSH_MS).</p>`
      : html`<ul class="plain">${list.map((i) => html`<li key=${i.id}><span class="mono">${i.host}</span> pid ${i.pid}, up since ${time(i.startedAt)}, gate ${i.gateMode}</li>`)}</ul>`}
  </${Panel}>`;
}

function Busiest(props: { id: string; title: string; list: Busy[]; format: (v: number) => string }) {
  const top = props.list[0]?.value ?? 0;
  return html`<${Panel} id=${props.id} title=${props.title}>
    ${props.list.length === 0
      ? html`<p>Nothing yet.</p>`
      : html`<ol class="bars">${props.list.map(
          (w) => html`<li key=${w.workspaceId}>
            <span class="bar-label">${w.name === null ? html`<span class="mono">${w.workspaceId}</span> (deleted)` : html`<${Link} href=${paths.workspace(w.workspaceId)}>${w.name}</${Link}>`}</span>
            <span class="bar" style=${`width:${top > 0 ? Math.max(2, (w.value / top) * 100) : 0}%`} aria-hidden="true"></span>
            <span class="bar-value">${props.format(w.value)}</span>
          </li>`,
        )}</ol>`}
  </${Panel}>`;
}

/** Workspaces at or over 80% of their storage quota: they refuse saves that add data at 100%. */
function NearQuotaPanel(props: { o: OverviewData }) {
  const list = props.o.nearQuota;
  return html`<${Panel} id="near-quota" title="Near their storage quota">
    ${list.length === 0
      ? html`<p>No workspace is at 80% of its quota or over.</p>`
      : html`<ul class="plain">${list.map(
          (w) => html`<li key=${w.workspaceId}>
            <span class=${`badge ${w.percent >= 95 ? 'danger' : 'warn'}`}>${w.percent}%</span>
            <${Link} href=${paths.workspace(w.workspaceId)}>${w.name}</${Link}>: ${size(w.usedBytes)} of ${size(w.quotaBytes)} (${w.plan})${w.percent >= 100 ? ', refusing saves that add data' : ''}
          </li>`,
        )}</ul>`}
  </${Panel}>`;
}

function RecentBans(props: { o: OverviewData }) {
  const bans = props.o.recentBans;
  return html`<${Panel} id="recent-bans" title="Recent bans">
    ${bans.length === 0
      ? html`<p>No ban in force was made recently.</p>`
      : html`<ul class="plain">${bans.map((b) => html`<li key=${b.address}><span class="mono">${b.address}</span>, ${time(b.bannedAt)}, ${b.source === 'gate' ? 'by the gate' : 'by an operator'}${b.reasons.filter((r) => r !== b.source).length ? ` (${b.reasons.filter((r) => r !== b.source).join(', ')})` : ''}</li>`)}</ul>`}
    <p><${Link} href=${paths.bans()}>All bans</${Link}> · gate mode <strong>${props.o.gateMode}</strong></p>
  </${Panel}>`;
}

/** Erasure jobs shown on the overview, newest first; the erasures page has the rest. */
const RECENT_ERASURES = 5;

/**
 * The newest erasure jobs with their state and progress, as cards (a phone reads them without
 * scrolling sideways). Read again whenever the overview is (its `at` changes).
 */
function RecentErasures(props: { o: OverviewData }) {
  const list = useLoad(() => adminData<{ counts: ErasureCounts; jobs: ErasureJob[] }>('GET', `/erasures?limit=${RECENT_ERASURES}`), [props.o.at]);
  const c = list.data?.counts;
  const jobs = list.data?.jobs ?? [];
  return html`<${Panel} id="recent-erasures" title="Recent erasures">
    <${ErrorNote} error=${list.error} />
    ${c ? html`<p data-testid="overview-erasure-counts">${n(c.pending)} pending, ${n(c.failed)} failed, ${n(c.unmapped)} waiting for a game's workspace; ${n(c.done)} done of ${n(c.requested)} requested.</p>` : null}
    ${list.data && jobs.length === 0 ? html`<p>No erasure requested yet.</p>` : null}
    ${jobs.length > 0
      ? html`<ul class="plain job-cards">${jobs.map(
          (j) => html`<li key=${j.jobId} aria-labelledby=${`${j.jobId}-h`}>
            <p id=${`${j.jobId}-h`}><span class="mono">${j.jobId}</span> <strong class=${`state state-${j.state}`}>${j.state}</strong></p>
            <p class="meta">Requested ${time(j.requestedAt)} by ${j.requestedBy}, ${scopeText(j.scope)}</p>
            <p><progress max=${Math.max(1, j.progress.workspacesTotal)} value=${j.progress.workspacesDone} aria-label=${`Progress of ${j.jobId}`}></progress>${progressText(j)}</p>
            ${j.lastError ? html`<p class="error">Last attempt failed: ${j.lastError}; retried at ${time(j.nextAttemptAt)}.</p>` : null}
            ${j.state === 'unmapped' ? html`<p>Waits for a workspace serving game ${j.unmappedGames.join(', ')}.</p>` : null}
          </li>`,
        )}</ul>`
      : null}
    <p><${Link} href=${paths.erasures()}>All erasures</${Link}></p>
  </${Panel}>`;
}

/** The overview's panels, in order. Adding a panel is one entry here. */
const PANELS: Array<(props: { o: OverviewData }) => unknown> = [
  (p) => html`<${Traffic} o=${p.o} />`,
  (p) => html`<${Latency} o=${p.o} />`,
  (p) => html`<${Memory} o=${p.o} />`,
  (p) => html`<${Instances} o=${p.o} />`,
  (p) => html`<${Busiest} id="busy-requests" title="Busiest workspaces, last hour" list=${p.o.busiestByRequests} format=${(v: number) => `${n(v)} requests`} />`,
  (p) => html`<${Busiest} id="busy-storage" title="Largest workspaces" list=${p.o.busiestByStorage} format=${size} />`,
  (p) => html`<${NearQuotaPanel} o=${p.o} />`,
  (p) => html`<${RecentBans} o=${p.o} />`,
  (p) => html`<${RecentErasures} o=${p.o} />`,
];

export function OverviewPage() {
  const data = useLoad(() => adminData<OverviewData>('GET', '/overview'), []);
  const [paused, setPaused] = useState(false);
  useEffect(() => {
    if (paused) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') data.reload();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [paused, data.reload]);
  const o = data.data;
  return html`<h1>Overview</h1>
    <div class="row">
      <p class="meta">${o ? `As of ${time(o.at)}; ` : ''}${paused ? 'updates paused.' : `updates every ${REFRESH_MS / 1000} s.`}</p>
      <button type="button" class="secondary" onClick=${() => setPaused(!paused)}>${paused ? 'Resume updates' : 'Pause updates'}</button>
      <button type="button" class="secondary" onClick=${() => data.reload()}>Refresh now</button>
    </div>
    <${ErrorNote} error=${data.error} />
    ${o ? html`<div class="panels">${PANELS.map((panel, i) => html`<${PanelSlot} key=${i} render=${panel} o=${o} />`)}</div>` : data.loading ? html`<p role="status">Loading…</p>` : null}`;
}

function PanelSlot(props: { render: (p: { o: OverviewData }) => unknown; o: OverviewData }) {
  return props.render({ o: props.o }) as ReturnType<typeof html>;
}
