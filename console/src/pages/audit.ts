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

/**
 * A time typed in UTC as ISO 8601: `2026-11-28`, `2026-11-28 14:05`, `2026-11-28T14:05:30Z`.
 * Text, not the browser's date widget, which shows local time in the reader's locale
 * (`mm/dd/yyyy, --:-- --`) beside a page that speaks UTC. `undefined` when it is not a time.
 */
export function utcIso(text: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?\s*(?:Z|UTC)?$/i.exec(text.trim());
  if (!m) return undefined;
  const [y, mo, d, h = '00', mi = '00', se = '00'] = m.slice(1);
  const ms = Date.UTC(+y!, +mo! - 1, +d!, +h, +mi, +se);
  const back = new Date(ms);
  // 2026-02-30 or 25:00 is not a time: Date.UTC would roll it over.
  if (back.getUTCMonth() !== +mo! - 1 || back.getUTCDate() !== +d! || back.getUTCHours() !== +h || back.getUTCMinutes() !== +mi) return undefined;
  return back.toISOString().replace('.000Z', 'Z');
}
const iso = (text: string) => (text.trim() ? utcIso(text) ?? '' : '');

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
  const bad = (text: string) => text.trim() !== '' && utcIso(text) === undefined;
  const sinceBad = bad(form.since);
  const untilBad = bad(form.until);
  const timeField = (id: string, name: 'since' | 'until', label: string, wrong: boolean) => html`<div>
    <label for=${id}>${label} (UTC)</label>
    <input id=${id} class="mono" inputmode="numeric" placeholder="2026-11-28 14:00" size="17" autocomplete="off" value=${form[name]}
      aria-invalid=${wrong ? 'true' : undefined} aria-describedby=${`${id}-note`} onInput=${field(name)} />
    <span id=${`${id}-note`} class=${wrong ? 'error' : 'hint'}>${wrong ? 'Not a date: YYYY-MM-DD, then HH:MM if you like' : form[name].trim() ? utcIso(form[name])!.replace('T', ' ').replace('Z', ' UTC') : 'YYYY-MM-DD HH:MM'}</span>
  </div>`;
  return html`<h1>Audit trail</h1>
    <form class="inline-form" aria-label="Filter the audit trail" onSubmit=${(e: Event) => {
      e.preventDefault();
      if (sinceBad || untilBad) return;
      setLimit(STEP);
      setApplied({ ...form, workspace: form.workspace.trim(), action: form.action.trim(), actor: form.actor.trim() });
    }}>
      <div><label for="audit-ws">Workspace id (empty: all)</label><input id="audit-ws" value=${form.workspace} onInput=${field('workspace')} /></div>
      <div><label for="audit-action">Action</label><input id="audit-action" list="audit-actions" placeholder="player.*" value=${form.action} onInput=${field('action')} />
        <datalist id="audit-actions">${ACTIONS.map((a) => html`<option value=${a}></option>`)}</datalist></div>
      <div><label for="audit-actor">Actor</label><input id="audit-actor" placeholder="console, admin-api, cli:…" value=${form.actor} onInput=${field('actor')} /></div>
      ${timeField('audit-since', 'since', 'From', sinceBad)}
      ${timeField('audit-until', 'until', 'To', untilBad)}
      <div><button type="submit" disabled=${sinceBad || untilBad}>Show</button></div>
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
