// /console/workspaces/<id>/players/<userId>: every key of one player with its value; edit (in
// a JSON editor that refuses invalid JSON), add and delete keys, delete the player, export.
// Every write carries the version the page loaded (ifVersion), so a game server's write in
// between comes back as a conflict instead of being overwritten. A game server's session
// (its lock on the player) is shown, and can be force-released when the server is gone. The
// History section (player-history.ts) lists, shows and restores older versions; the messages
// waiting for the player are listed, sent and deleted in place (messages.ts).
import { useMemo, useState } from 'preact/hooks';
import { adminData, ApiError, enc } from '../api.js';
import { navigate, paths } from '../router.js';
import { PlayerMessages } from './messages.js';
import { PlayerHistory } from './player-history.js';
import { ErrorNote, html, JsonEditor, JsonTree, Notice, Pager, pretty, Tabs, time, TypedConfirm, useAction, useLoad, usePages } from '../ui.js';
import { WorkspaceHeader } from './workspace-nav.js';

interface Entry {
  value: unknown;
  updated_at: string;
}

interface Session {
  sessionId: string;
  owner: string;
  expiresAt: string;
}

interface Loaded {
  data: Record<string, Entry>;
  exportedAt: string;
  /** The player's version when loaded (docs/safe-saves.md); every write is conditional on it. */
  version: number;
  session: Session | null;
  found: boolean;
}

async function loadPlayer(workspaceId: string, userId: string): Promise<Loaded> {
  const base = `/workspaces/${enc(workspaceId)}/players/${enc(userId)}`;
  const [exported, held] = await Promise.all([
    // A person looks at the player: audited as player.view (the export button is the export).
    adminData<{ data: Record<string, Entry>; exportedAt: string; version: number }>('GET', `${base}?purpose=view`).catch((err: unknown) => {
      if (err instanceof ApiError && err.code === 'PLAYER_NOT_FOUND') {
        const version = err.body?.['version'];
        return { data: {}, exportedAt: new Date().toISOString(), version: typeof version === 'number' ? version : 0, missing: true };
      }
      throw err;
    }),
    adminData<{ session: Session | null }>('GET', `${base}/session`),
  ]);
  return { ...exported, session: held.session, found: !('missing' in exported) };
}

function conflictText(err: unknown): string | undefined {
  if (err instanceof ApiError && err.code === 'SESSION_LOCKED') {
    return `${err.describe()}: a game server holds this player, and would overwrite the change with what it holds in memory. Wait until it lets go, or force-release its session if it has crashed.`;
  }
  if (err instanceof ApiError && err.code === 'VERSION_CONFLICT') {
    const now = err.body?.['version'];
    return `Conflict: the player changed since this page loaded it${typeof now === 'number' ? ` (now version ${now})` : ''}. Nothing was written. Reload to see the current data; your edit is still in the editor.`;
  }
  return undefined;
}

export function PlayerPage(props: { workspaceId: string; userId: string }) {
  const { workspaceId, userId } = props;
  const player = useLoad(() => loadPlayer(workspaceId, userId), [workspaceId, userId]);
  const [note, setNote] = useState<string | undefined>();
  // The key being edited and the version the player had when its editor opened: the save is
  // conditional on that version, even if the page reloads meanwhile.
  const [editing, setEditing] = useState<{ key: string; version: number } | undefined>();
  const [filter, setFilter] = useState('');
  const action = useAction();
  const loaded = player.data;
  const keys = useMemo(() => {
    const all = Object.keys(loaded?.data ?? {}).sort();
    return filter ? all.filter((k) => k.toLowerCase().includes(filter.toLowerCase())) : all;
  }, [loaded, filter]);
  const pages = usePages(keys, 25);
  const base = `/workspaces/${enc(workspaceId)}/players/${enc(userId)}`;

  /** Writes one key, only if the player is still at the version the change was made against. */
  const write = (key: string, value: unknown, ifVersion: number) =>
    action.run(async () => {
      await adminData('PUT', base, { key, value, ifVersion });
      setEditing(undefined);
      setNote(`Saved "${key}".`);
      player.reload();
    });

  /** A fresh read of the player as a file: this is the audited export (player.export). */
  const exportFile = () =>
    action.run(async () => {
      const exported = await adminData<Record<string, unknown>>('GET', `${base}?purpose=export`);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([JSON.stringify(exported, null, 2)], { type: 'application/json' }));
      link.download = `player-${workspaceId}-${userId}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      setNote('Exported the player as a JSON file.');
    });

  const release = (owner: string) =>
    action.run(async () => {
      await adminData('DELETE', `${base}/session`);
      setNote(`Released the session of ${owner}.`);
      player.reload();
    });

  /** Said before an edit when a game server holds the player, with the way out. */
  const heldNotice = (session: Session | null) =>
    session
      ? html`<div class="warning" role="note">
          <p>A game server holds this player (session of <strong class="mono">${session.owner}</strong> until ${time(session.expiresAt)}): a save is refused while it does, since the server would overwrite it with what it has in memory.</p>
          <button type="button" class="destructive" disabled=${action.busy} onClick=${() => {
            if (confirm(`Force-release the session of ${session.owner}? Do this only if that server is gone: a live one loses its next save.`)) void release(session.owner);
          }}>Force-release session first</button>
        </div>`
      : null;

  const conflict = conflictText(action.error);
  return html`<${WorkspaceHeader} workspaceId=${workspaceId} current="players" title=${html`Player <span class="mono">${userId}</span>`}
      parent=${{ href: paths.players(workspaceId), label: 'Players' }} />
    <${ErrorNote} error=${player.error} />
    ${loaded
      ? html`<p class="meta">
          ${loaded.found ? `${Object.keys(loaded.data).length} keys; loaded ${time(loaded.exportedAt)}` : 'This player has no data.'}
          ; version <strong data-testid="player-version">${loaded.version}</strong>
        </p>
        ${loaded.session
          ? html`<div class="warning" role="region" aria-label="Session">
              <p>A game server holds this player: session of <strong class="mono">${loaded.session.owner}</strong> until ${time(loaded.session.expiresAt)}.
                Changes are refused while it holds it (the server would overwrite them with what it has in memory).</p>
              <button type="button" class="destructive" disabled=${action.busy} onClick=${() => {
                if (!confirm(`Force-release the session of ${loaded.session!.owner}? Do this only if that server is gone: a live one loses its next save.`)) return;
                void release(loaded.session!.owner);
              }}>Force-release session</button>
            </div>`
          : html`<p class="meta">No game server holds this player.</p>`}
        <div class="row">
          <button type="button" class="secondary" onClick=${() => player.reload()}>Reload</button>
          ${loaded.found ? html`<button type="button" class="secondary" disabled=${action.busy} onClick=${() => void exportFile()}>Export as JSON file</button>` : null}
        </div>
        <${Notice} text=${note} />
        ${conflict ? html`<p class="error" role="alert">${conflict}</p>` : html`<${ErrorNote} error=${action.error} />`}
        <${Tabs} label="Player" tabs=${[
          { id: 'data', label: 'Data', count: Object.keys(loaded.data).length, render: () => html`<div class="data-layout"><div class="data-keys">
        ${loaded.found
          ? html`<div class="row filter"><label for="key-filter">Filter keys</label>
              <input id="key-filter" type="search" value=${filter} onInput=${(e: Event) => {
                setFilter((e.target as HTMLInputElement).value);
                pages.setPage(0);
              }} /></div>`
          : null}
        ${pages.shown.map((key) => {
          const entry = loaded.data[key]!;
          const slug = `k${keys.indexOf(key)}`;
          return html`<article class="entry" key=${key} aria-labelledby=${`${slug}-h`}>
            <div class="entry-head"><h3 id=${`${slug}-h`} class="mono">${key}</h3>
            <span class="meta">updated_at ${time(entry.updated_at)}</span></div>
            ${editing?.key === key
              ? html`<${JsonEditor} id=${`${slug}-edit`} label=${`New value of ${key} (JSON)`} initial=${pretty(entry.value)}
                  busy=${action.busy} submitLabel="Save" onCancel=${() => setEditing(undefined)} notice=${heldNotice(loaded.session)}
                  onSubmit=${(value: unknown) => void write(key, value, editing!.version)} />`
              : html`<${JsonTree} value=${entry.value} label=${`Value of ${key}`} name=${key} />
                <div class="row entry-actions">
                  <button type="button" class="secondary" aria-label=${`Edit ${key}`} onClick=${() => {
                    action.setError(undefined);
                    setEditing({ key, version: loaded.version });
                  }}>Edit</button>
                  <button type="button" class="destructive" aria-label=${`Delete key ${key}`} disabled=${action.busy} onClick=${() => {
                    if (!confirm(`Delete the key "${key}" of player ${userId}?`)) return;
                    void action.run(async () => {
                      await adminData('DELETE', `${base}?key=${enc(key)}&ifVersion=${loaded.version}`);
                      setNote(`Deleted "${key}".`);
                      player.reload();
                    });
                  }}>Delete key</button>
                </div>`}
          </article>`;
        })}
        <${Pager} label="Keys" ...${pages} />
        </div>
        <section aria-labelledby="add-h" class="add-key">
          <h2 id="add-h">Add a key</h2>
          <${AddKey} busy=${action.busy} notice=${heldNotice(loaded.session)} onAdd=${(key: string, value: unknown) => {
            if (loaded.data[key]) {
              action.setError(new Error(`"${key}" exists: edit it instead.`));
              return;
            }
            void write(key, value, loaded.version);
          }} />
        </section></div>` },
          { id: 'history', label: 'History', render: () => loaded.version > 0
          ? html`<${PlayerHistory} workspaceId=${workspaceId} userId=${userId} version=${loaded.version} sessionOwner=${loaded.session?.owner}
              current=${loaded.data}
              onRestored=${() => {
                // The page's other panels show the data before the restore: close them.
                setEditing(undefined);
                setNote(undefined);
                action.setError(undefined);
                player.reload();
              }} />`
          : html`<p>No history: this player has never been written.</p>` },
          { id: 'messages', label: 'Messages', render: () => html`<${PlayerMessages} workspaceId=${workspaceId} userId=${userId} title="Messages waiting" onPlayerPage=${true} />` },
          { id: 'danger', label: 'Danger zone', render: () => loaded.found
          ? html`<section aria-labelledby="del-player-h">
              <h2 id="del-player-h">Delete the player</h2>
              <${TypedConfirm} id="delete-player" word=${userId} what="delete every key of this player" button="Delete player" busy=${action.busy}
                onConfirm=${() => void action.run(async () => {
                  await adminData('DELETE', `${base}?ifVersion=${loaded.version}`);
                  navigate(paths.workspace(workspaceId));
                })} />
            </section>`
          : html`<p>This player has no data to delete.</p>` },
        ]} />`
      : player.loading
        ? html`<p role="status">Loading…</p>`
        : null}`;
}

function AddKey(props: { busy: boolean; notice: unknown; onAdd: (key: string, value: unknown) => void }) {
  const [key, setKey] = useState('');
  return html`<div>
    <label for="new-key">Key</label>
    <input id="new-key" maxlength="128" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} />
    <${JsonEditor} id="new-value" label="Value (JSON)" initial="" busy=${props.busy || !key.trim()} submitLabel="Add key" notice=${props.notice}
      onSubmit=${(value: unknown) => props.onAdd(key.trim(), value)} />
  </div>`;
}
