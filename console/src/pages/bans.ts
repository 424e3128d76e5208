// /console/bans: bans (search, evidence, lift, add by hand), the allow-list, recent violations.
import { useMemo, useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { ErrorNote, html, JsonView, Notice, Pager, time, useAction, useLoad, usePages } from '../ui.js';

interface GateState {
  mode: 'off' | 'report' | 'enforce';
  meaning: string;
  checks: { userAgent: boolean; robloxId: boolean; addressRanges: number };
  banMaxPerMinute: number;
}

/** The gate's mode on this instance and what it means, above the bans it governs. */
function GateMode(props: { gate: GateState | undefined; error: unknown }) {
  const g = props.gate;
  return html`<section aria-labelledby="gate-h" class="gate-mode">
    <h2 id="gate-h">Gate mode: ${g ? html`<strong data-testid="gate-mode">${g.mode}</strong>` : '…'}</h2>
    <${ErrorNote} error=${props.error} />
    ${g
      ? html`<p>${g.meaning}</p>
        <p class="meta">Checks: User-Agent ${g.checks.userAgent ? 'on' : 'off'}, Roblox-Id ${g.checks.robloxId ? 'on' : 'off'}, ${g.checks.addressRanges} platform address ranges; at most ${g.banMaxPerMinute} automatic bans a minute. Set by GATE_MODE (docs/platform-access.md).</p>`
      : null}
  </section>`;
}

interface Ban {
  address: string;
  bannedAt: string;
  source: string;
  reasons: string[];
  note?: string;
  evidence?: unknown;
}
interface AllowEntry {
  entry: string;
  addedAt: string;
  note?: string;
}
interface Violation {
  at: string;
  address?: string;
  reasons: string[];
  mode: string;
  outcome: string;
  notBanned?: string;
  evidence: unknown;
}

/** Pages of GET /admin/v1/bans read here, 1000 bans each: the search below runs on what they hold. */
const BAN_PAGES_READ = 10;

/** The bans, page after page of the admin API's cursor, up to BAN_PAGES_READ pages. */
async function loadBans(): Promise<Ban[]> {
  const out: Ban[] = [];
  let after: string | null = null;
  for (let i = 0; i < BAN_PAGES_READ; i++) {
    const query: string = after === null ? '' : `&after=${enc(after)}`;
    const page: { bans: Ban[]; next: string | null } = await adminData('GET', `/bans?limit=1000${query}`);
    out.push(...page.bans);
    after = page.next;
    if (after === null) break;
  }
  return out;
}

function BanList(props: { mode: GateState['mode'] | undefined }) {
  const list = useLoad(loadBans, []);
  const [query, setQuery] = useState('');
  const [note, setNote] = useState<string | undefined>();
  const action = useAction();
  const [address, setAddress] = useState('');
  const [reason, setReason] = useState('');
  const found = useMemo(() => {
    const q = query.trim().toLowerCase();
    const all = [...(list.data ?? [])].sort((a, b) => b.bannedAt.localeCompare(a.bannedAt));
    return q ? all.filter((b) => [b.address, b.note ?? '', ...b.reasons].some((t) => t.toLowerCase().includes(q))) : all;
  }, [list.data, query]);
  const pages = usePages(found, 20);
  return html`<section aria-labelledby="bans-h">
    <h2 id="bans-h">Bans</h2>
    <${Notice} text=${note} />
    <${ErrorNote} error=${list.error ?? action.error} />
    <div class="row"><label for="ban-search">Search bans (address, reason, note)</label>
      <input id="ban-search" type="search" value=${query} onInput=${(e: Event) => {
        setQuery((e.target as HTMLInputElement).value);
        pages.setPage(0);
      }} /></div>
    <div class="table-wrap"><table class="cards">
      <caption class="visually-hidden">Bans</caption>
      <thead><tr><th scope="col">Address</th><th scope="col">Banned</th><th scope="col">Source</th><th scope="col">Reasons</th><th scope="col">Evidence</th><th scope="col">Action</th></tr></thead>
      <tbody>${pages.shown.map(
        (b) => html`<tr key=${b.address}>
          <td data-label="Address" class="mono">${b.address}</td><td data-label="Banned">${time(b.bannedAt)}</td>
          <td data-label="Source">${b.source === 'gate' ? 'the gate' : 'an operator'}${b.source === 'gate' && props.mode === 'off' ? html`<div class="meta">not applied while the gate is off</div>` : null}</td>
          <td data-label="Reasons">${b.reasons.join(', ') || '—'}${b.note ? html`<div class="meta">${b.note}</div>` : null}</td>
          <td data-label="Evidence">${b.evidence ? html`<details><summary>Evidence of ${b.address}</summary><${JsonView} value=${b.evidence} label=${`Evidence of ${b.address}`} /></details>` : '—'}</td>
          <td data-label="Action"><button type="button" aria-label=${`Lift the ban of ${b.address}`} disabled=${action.busy} onClick=${() => {
            if (!confirm(`Lift the ban of ${b.address}?`)) return;
            void action.run(async () => {
              await adminData('DELETE', `/bans/${enc(b.address)}`);
              setNote(`Lifted the ban of ${b.address}.`);
              list.reload();
            });
          }}>Lift</button></td></tr>`,
      )}</tbody></table></div>
    ${list.data && found.length === 0 ? html`<p>No bans${query ? ' match' : ''}.</p>` : null}
    <${Pager} label="Bans" ...${pages} />
    <h3>Ban an address by hand</h3>
    <form class="inline-form" onSubmit=${(e: Event) => {
      e.preventDefault();
      void action.run(async () => {
        await adminData('POST', '/bans', { address: address.trim(), ...(reason.trim() ? { reason: reason.trim() } : {}) });
        setNote(`Banned ${address.trim()}.`);
        setAddress('');
        setReason('');
        list.reload();
      });
    }}>
      <div><label for="ban-address">Address</label><input id="ban-address" required value=${address} onInput=${(e: Event) => setAddress((e.target as HTMLInputElement).value)} /></div>
      <div><label for="ban-reason">Reason</label><input id="ban-reason" maxlength="500" value=${reason} onInput=${(e: Event) => setReason((e.target as HTMLInputElement).value)} /></div>
      <div><button type="submit" disabled=${action.busy}>Ban address</button></div>
    </form>
  </section>`;
}

function AllowList() {
  const list = useLoad(() => adminData<AllowEntry[]>('GET', '/ban-allow'), []);
  const action = useAction();
  const [entry, setEntry] = useState('');
  const [note, setNote] = useState('');
  const [done, setDone] = useState<string | undefined>();
  const pages = usePages(list.data ?? [], 20);
  return html`<section aria-labelledby="allow-h">
    <h2 id="allow-h">Allow-list (never banned)</h2>
    <${Notice} text=${done} />
    <${ErrorNote} error=${list.error ?? action.error} />
    <div class="table-wrap"><table class="cards">
      <caption class="visually-hidden">Allow-list</caption>
      <thead><tr><th scope="col">Address or range</th><th scope="col">Added</th><th scope="col">Note</th><th scope="col">Action</th></tr></thead>
      <tbody>${pages.shown.map(
        (a) => html`<tr key=${a.entry}><td data-label="Address or range" class="mono">${a.entry}</td><td data-label="Added">${time(a.addedAt)}</td><td data-label="Note">${a.note ?? '—'}</td>
          <td data-label="Action"><button type="button" class="secondary" aria-label=${`Remove ${a.entry} from the allow-list`} disabled=${action.busy} onClick=${() =>
            void action.run(async () => {
              await adminData('DELETE', `/ban-allow/${enc(a.entry)}`);
              setDone(`Removed ${a.entry} from the allow-list.`);
              list.reload();
            })}>Remove</button></td></tr>`,
      )}</tbody></table></div>
    <${Pager} label="Allow-list" ...${pages} />
    <form class="inline-form" onSubmit=${(e: Event) => {
      e.preventDefault();
      void action.run(async () => {
        const added = await adminData<{ entry: string; lifted: string[] }>('POST', '/ban-allow', { entry: entry.trim(), ...(note.trim() ? { note: note.trim() } : {}) });
        setDone(`Allowed ${added.entry}${added.lifted.length ? `; lifted the bans of ${added.lifted.join(', ')}` : ''}.`);
        setEntry('');
        setNote('');
        list.reload();
      });
    }}>
      <div><label for="allow-entry">Address or range</label><input id="allow-entry" required value=${entry} onInput=${(e: Event) => setEntry((e.target as HTMLInputElement).value)} /></div>
      <div><label for="allow-note">Note</label><input id="allow-note" maxlength="500" value=${note} onInput=${(e: Event) => setNote((e.target as HTMLInputElement).value)} /></div>
      <div><button type="submit" disabled=${action.busy}>Allow</button></div>
    </form>
  </section>`;
}

function Violations() {
  const list = useLoad(() => adminData<Violation[]>('GET', '/violations?limit=200'), []);
  const pages = usePages(list.data ?? [], 20);
  return html`<section aria-labelledby="viol-h">
    <h2 id="viol-h">Recent violations</h2>
    <${ErrorNote} error=${list.error} />
    <div class="table-wrap"><table class="cards">
      <caption class="visually-hidden">Recent violations</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Address</th><th scope="col">Reasons</th><th scope="col">Outcome</th><th scope="col">Evidence</th></tr></thead>
      <tbody>${pages.shown.map(
        (v, i) => html`<tr key=${v.at + i}><td data-label="When">${time(v.at)}</td><td data-label="Address" class="mono">${v.address ?? 'unknown'}</td><td data-label="Reasons">${v.reasons.join(', ')}</td>
          <td data-label="Outcome">${v.outcome} (${v.mode})${v.notBanned ? html`<div class="meta">${v.notBanned}</div>` : null}</td>
          <td data-label="Evidence"><details><summary>Evidence</summary><${JsonView} value=${v.evidence} label="Evidence" /></details></td></tr>`,
      )}</tbody></table></div>
    ${list.data && list.data.length === 0 ? html`<p>No violations recorded.</p>` : null}
    <${Pager} label="Violations" ...${pages} />
  </section>`;
}

export function BansPage() {
  const gate = useLoad(() => adminData<GateState>('GET', '/gate'), []);
  return html`<h1>Bans</h1><${GateMode} gate=${gate.data} error=${gate.error} /><${BanList} mode=${gate.data?.mode} /><${AllowList} /><${Violations} />`;
}
