// /console/audit: the admin audit trail, newest first, optionally of one workspace; "Show more"
// reads further back (the API answers the newest N).
import { useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { ErrorNote, html, time, useLoad } from '../ui.js';

interface AuditEntry {
  at: string;
  actor: string;
  action: string;
  target: string;
  workspaceId?: string;
  details?: Record<string, unknown>;
}

const STEP = 50;

export function AuditPage() {
  const [limit, setLimit] = useState(STEP);
  const [workspace, setWorkspace] = useState('');
  const [applied, setApplied] = useState('');
  const list = useLoad(
    () => adminData<AuditEntry[]>('GET', `/audit?limit=${limit}${applied ? `&workspace=${enc(applied)}` : ''}`),
    [limit, applied],
  );
  const entries = list.data ?? [];
  return html`<h1>Audit trail</h1>
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      setLimit(STEP);
      setApplied(workspace.trim());
    }}>
      <div><label for="audit-ws">Workspace id (empty: all)</label><input id="audit-ws" value=${workspace} onInput=${(e: Event) => setWorkspace((e.target as HTMLInputElement).value)} /></div>
      <button type="submit">Show</button>
    </form>
    <${ErrorNote} error=${list.error} />
    <div class="table-wrap"><table>
      <caption class="visually-hidden">Audit entries, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
      <tbody>${entries.map(
        (a, i) => html`<tr key=${a.at + i}><td>${time(a.at)}</td><td>${a.actor}</td><td class="mono">${a.action}</td><td class="mono">${a.target}</td>
          <td class="mono">${a.details ? Object.entries(a.details).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ') : ''}</td></tr>`,
      )}</tbody></table></div>
    ${list.loading ? html`<p role="status">Loading…</p>` : null}
    ${!list.loading && entries.length === 0 ? html`<p>No audit entries.</p>` : null}
    ${entries.length >= limit && limit < 10_000
      ? html`<button type="button" onClick=${() => setLimit(Math.min(10_000, limit + STEP))}>Show ${STEP} more</button>`
      : null}`;
}
