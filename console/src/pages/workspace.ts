// /console/workspaces/<id>: the workspace (rename, plan, delete), its keys, its usage, its
// export and import, its games, and the way to a player's data. Its players, messages and
// leaderboards have pages of their own (workspace-nav.ts).
import { useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { navigate, paths } from '../router.js';
import { ErrorNote, html, Link, Notice, size, Tabs, time, TypedConfirm, useAction, useLoad } from '../ui.js';
import { KeysSection, type KeyView } from './keys.js';
import { TransferSection } from './transfer.js';
import { ErasurePlayersSection, GamesSection } from './games.js';
import { UsageSection, type UsageReport } from './usage.js';
import { WorkspaceHeader } from './workspace-nav.js';
import type { Workspace } from './workspaces.js';

interface Storage {
  bytes: number;
  players: number;
  historyBytes: number;
  quotaBytes: number;
  /** What the quota weighs: bytes less history. */
  quotaUsedBytes: number;
  quotaPercent: number;
}

/** What the workspace stores against its plan's quota (history apart: it has a bound of its own), as the service last added it up. */
function StorageLine(props: { storage: Storage }) {
  const { players, historyBytes, quotaBytes, quotaUsedBytes, quotaPercent } = props.storage;
  return html`<div class="row storage">
    <label for="storage-meter">Storage</label>
    <meter id="storage-meter" min="0" max=${quotaBytes || 1} value=${quotaUsedBytes} low=${quotaBytes * 0.8} high=${quotaBytes * 0.95} optimum="0"></meter>
    <span>${size(quotaUsedBytes)} of ${size(quotaBytes)} (${quotaPercent}%), data of ${players.toLocaleString('en')} ${players === 1 ? 'player' : 'players'}; history ${size(historyBytes)} beside it</span>
  </div>`;
}

/** The warning before the quota's wall, on every tab: at 80% and 95% of the quota, and over it. */
export function QuotaBanner(props: { storage: Storage; plan: string }) {
  const { quotaPercent: percent, quotaUsedBytes, quotaBytes } = props.storage;
  if (percent < 80) return null;
  const over = quotaUsedBytes >= quotaBytes;
  const level = over ? 'over' : percent >= 95 ? '95' : '80';
  const text = over
    ? 'Saves that add data are refused (403 STORAGE_QUOTA_EXCEEDED); deletes still pass.'
    : 'Saves that add data will be refused at 100% (403 STORAGE_QUOTA_EXCEEDED).';
  return html`<div id="quota-banner" class=${`quota-banner ${over || level === '95' ? 'danger' : 'warning'}`} role="note" data-level=${level}>
    <span class=${`badge ${over || level === '95' ? 'danger' : 'warn'}`}>${percent}% of quota</span>
    <span><strong>${over ? 'Over its storage quota' : 'Near its storage quota'}</strong>: ${size(quotaUsedBytes)} of the ${props.plan} plan's ${size(quotaBytes)}. ${text} Delete data, or move to a larger plan (Settings).</span>
  </div>`;
}

function Settings(props: { workspace: Workspace; onChanged: (note: string) => void }) {
  const w = props.workspace;
  const [name, setName] = useState(w.name);
  const [plan, setPlan] = useState(w.plan);
  const action = useAction();
  const save = (body: Record<string, string>, note: string) => (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await adminData('PATCH', `/workspaces/${enc(w.id)}`, body);
      props.onChanged(note);
    });
  };
  return html`<section aria-labelledby="settings-h">
    <h2 id="settings-h">Settings</h2>
    <form class="row" onSubmit=${save({ name }, `Renamed to ${name}.`)}>
      <div><label for="rename">Name</label><input id="rename" required maxlength="100" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /></div>
      <button type="submit" disabled=${action.busy || name === w.name}>Rename</button>
    </form>
    <form class="row" onSubmit=${save({ plan }, `Plan changed to ${plan}.`)}>
      <div><label for="plan">Plan</label>
        <select id="plan" value=${plan} onChange=${(e: Event) => setPlan((e.target as HTMLSelectElement).value)}>
          <option value="free">free</option><option value="pro">pro</option>
        </select></div>
      <button type="submit" disabled=${action.busy || plan === w.plan}>Change plan</button>
    </form>
    <${ErrorNote} error=${action.error} />
  </section>`;
}

function FindPlayer(props: { workspaceId: string }) {
  const [userId, setUserId] = useState('');
  return html`<section aria-labelledby="player-h">
    <h2 id="player-h">Players</h2>
    <p><${Link} href=${paths.players(props.workspaceId)}>List the players</${Link}>, newest written first, or open one by its id:</p>
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      if (userId.trim()) navigate(paths.player(props.workspaceId, userId.trim()));
    }}>
      <div><label for="find-user">User id</label><input id="find-user" required value=${userId} onInput=${(e: Event) => setUserId((e.target as HTMLInputElement).value)} /></div>
      <button type="submit">Open player</button>
    </form>
  </section>`;
}

function DeleteWorkspace(props: { workspace: Workspace }) {
  const action = useAction();
  return html`<section aria-labelledby="delete-h">
    <h2 id="delete-h">Danger zone: delete the workspace</h2>
    <p>Deletes its keys and every player's data. This cannot be undone.</p>
    <${TypedConfirm} id="delete-ws" word=${props.workspace.name} what="delete this workspace" button="Delete workspace" busy=${action.busy}
      onConfirm=${() => void action.run(async () => {
        await adminData('DELETE', `/workspaces/${enc(props.workspace.id)}`);
        navigate(paths.workspaces());
      })} />
    <${ErrorNote} error=${action.error} />
  </section>`;
}

export function WorkspacePage(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const details = useLoad(() => adminData<Workspace & { keys: KeyView[]; storage?: Storage }>('GET', `/workspaces/${enc(id)}`), [id]);
  const usage = useLoad(() => adminData<UsageReport>('GET', `/workspaces/${enc(id)}/usage?days=30`), [id]);
  const [note, setNote] = useState<string | undefined>();
  const w = details.data;
  const active = w?.keys.filter((k) => k.status === 'active').length;
  return html`<${WorkspaceHeader} workspaceId=${id} current="workspace" own=${true} title=${w ? w.name : 'Workspace'} name=${w?.name} />
    <${ErrorNote} error=${details.error} />
    ${w
      ? html`<${Notice} text=${note} />
        ${w.storage ? html`<${QuotaBanner} storage=${w.storage} plan=${w.plan} />` : null}
        <${Tabs} label="Workspace" tabs=${[
          {
            id: 'overview', label: 'Overview', render: () => html`
              <div class="stats">
                <div class="stat"><div class="label">Plan</div><div class="value">${w.plan}</div></div>
                <div class="stat"><div class="label">Players with data</div><div class="value">${usage.data ? usage.data.players.toLocaleString('en') : '…'}</div></div>
                <div class="stat"><div class="label">Requests, 30 days</div><div class="value">${usage.data ? usage.data.totals.requests.toLocaleString('en') : '…'}</div></div>
                <div class="stat"><div class="label">API keys</div><div class="value">${w.keys.length}</div></div>
              </div>
              <p class="meta">Created ${time(w.createdAt)}.</p>
              ${w.storage ? html`<${StorageLine} storage=${w.storage} />` : null}
              <${FindPlayer} workspaceId=${id} />`,
          },
          {
            id: 'keys', label: 'API keys', count: active, render: () => html`<${KeysSection} workspaceId=${id} keys=${w.keys} reload=${() => {
              details.reload();
              usage.reload();
            }} />`,
          },
          { id: 'usage', label: 'Usage', render: () => html`<${UsageSection} usage=${usage.data} /><${ErrorNote} error=${usage.error} />` },
          { id: 'transfer', label: 'Export and import', render: () => html`<${TransferSection} workspaceId=${id} onImported=${() => details.reload()} />` },
          { id: 'games', label: 'Games', render: () => html`<${GamesSection} workspaceId=${id} /><${ErasurePlayersSection} workspaceId=${id} />` },
          {
            id: 'settings', label: 'Settings', render: () => html`<${Settings} workspace=${w} onChanged=${(text: string) => {
              setNote(text);
              details.reload();
            }} />
            <${DeleteWorkspace} workspace=${w} />`,
          },
        ]} />`
      : details.loading
        ? html`<p role="status">Loading…</p>`
        : null}`;
}
