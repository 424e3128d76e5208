// /console/audit: the admin audit trail, newest first, filtered by workspace, action (or a
// family: player.*), actor and time; "Show more" reads further back (the API answers the newest N).
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

interface Filter {
  workspace: string;
  action: string;
  actor: string;
  since: string;
  until: string;
}

const STEP = 50;
const NONE: Filter = { workspace: '', action: '', actor: '', since: '', until: '' };
const ACTIONS = ['workspace.*', 'key.*', 'player.*', 'player.view', 'player.export', 'player.set', 'player.delete', 'player.restore', 'ban.*', 'console.*'];

/** A datetime-local value (the browser's, read as UTC here, as the page shows times) as ISO 8601. */
const iso = (local: string) => (local ? `${local.length === 16 ? `${local}:00` : local}Z` : '');

function query(limit: number, f: Filter): string {
  const q = [`limit=${limit}`];
  if (f.workspace) q.push(`workspace=${enc(f.workspace)}`);
  if (f.action) q.push(`action=${enc(f.action)}`);
  if (f.actor) q.push(`actor=${enc(f.actor)}`);
  if (f.since) q.push(`since=${enc(iso(f.since))}`);
  if (f.until) q.push(`until=${enc(iso(f.until))}`);
  return q.join('&');
}

export function AuditPage() {
  const [limit, setLimit] = useState(STEP);
  const [form, setForm] = useState<Filter>(NONE);
  const [applied, setApplied] = useState<Filter>(NONE);
  const list = useLoad(() => adminData<AuditEntry[]>('GET', `/audit?${query(limit, applied)}`), [limit, applied]);
  const entries = list.data ?? [];
  const field = (name: keyof Filter) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  return html`<h1>Audit trail</h1>
    <form class="inline-form" aria-label="Filter the audit trail" onSubmit=${(e: Event) => {
      e.preventDefault();
      setLimit(STEP);
      setApplied({ ...form, workspace: form.workspace.trim(), action: form.action.trim(), actor: form.actor.trim() });
    }}>
      <div><label for="audit-ws">Workspace id (empty: all)</label><input id="audit-ws" value=${form.workspace} onInput=${field('workspace')} /></div>
      <div><label for="audit-action">Action</label><input id="audit-action" list="audit-actions" placeholder="player.*" value=${form.action} onInput=${field('action')} />
        <datalist id="audit-actions">${ACTIONS.map((a) => html`<option value=${a}></option>`)}</datalist></div>
      <div><label for="audit-actor">Actor</label><input id="audit-actor" placeholder="console, admin-api, cli:…" value=${form.actor} onInput=${field('actor')} /></div>
      <div><label for="audit-since">From (UTC)</label><input id="audit-since" type="datetime-local" value=${form.since} onInput=${field('since')} /></div>
      <div><label for="audit-until">To (UTC)</label><input id="audit-until" type="datetime-local" value=${form.until} onInput=${field('until')} /></div>
      <div><button type="submit">Show</button></div>
    </form>
    <${ErrorNote} error=${list.error} />
    <div class="table-wrap"><table class="cards">
      <caption class="visually-hidden">Audit entries, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
      <tbody>${entries.map(
        (a, i) => html`<tr key=${a.at + i}><td data-label="When">${time(a.at)}</td><td data-label="Actor">${a.actor}</td><td data-label="Action" class="mono">${a.action}</td><td data-label="Target" class="mono">${a.target}</td>
          <td data-label="Details" class="mono">${a.details ? Object.entries(a.details).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ') : ''}</td></tr>`,
      )}</tbody></table></div>
    ${list.loading ? html`<p role="status">Loading…</p>` : null}
    ${!list.loading && entries.length === 0 ? html`<p>No audit entries${applied === NONE ? '' : ' match'}.</p>` : null}
    ${entries.length >= limit && limit < 10_000
      ? html`<button type="button" onClick=${() => setLimit(Math.min(10_000, limit + STEP))}>Show ${STEP} more</button>`
      : null}`;
}
