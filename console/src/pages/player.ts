// /console/workspaces/<id>/players/<userId>: every key of one player with its value; edit (in
// a JSON editor that refuses invalid JSON), add and delete keys, delete the player, export.
// A write carries the version the page loaded (ifVersion) when the service reports versions,
// so a game server's write in between comes back as a conflict instead of being overwritten.
import { useMemo, useState } from 'preact/hooks';
import { admin, adminData, ApiError, enc } from '../api.js';
import { navigate, paths } from '../router.js';
import { ErrorNote, html, JsonEditor, JsonView, Link, Notice, Pager, time, TypedConfirm, useAction, useLoad, usePages } from '../ui.js';

interface Entry {
  value: unknown;
  updated_at: string;
}

interface Loaded {
  data: Record<string, Entry>;
  exportedAt: string;
  /** Present once the admin API reports player versions (docs/safe-saves.md). */
  version?: number;
  session?: Record<string, unknown> | null;
  found: boolean;
}

async function loadPlayer(workspaceId: string, userId: string): Promise<Loaded> {
  try {
    const answer = await admin('GET', `/workspaces/${enc(workspaceId)}/players/${enc(userId)}`);
    const data = answer['data'] as Record<string, unknown>;
    const version = (answer['version'] ?? data['version']) as number | undefined;
    const session = (answer['session'] ?? data['session']) as Loaded['session'];
    return {
      data: data['data'] as Record<string, Entry>,
      exportedAt: data['exportedAt'] as string,
      found: true,
      ...(typeof version === 'number' ? { version } : {}),
      ...(session !== undefined ? { session } : {}),
    };
  } catch (err) {
    if (err instanceof ApiError && (err.code === 'PLAYER_NOT_FOUND' || (err.status === 404 && /player not found/i.test(err.message)))) {
      const version = err.body?.['version'];
      return { data: {}, exportedAt: new Date().toISOString(), found: false, ...(typeof version === 'number' ? { version } : {}) };
    }
    throw err;
  }
}

class Conflict extends Error {}

function conflictText(err: unknown): string | undefined {
  if (err instanceof Conflict) return err.message;
  if (err instanceof ApiError && err.status === 409 && (err.code === 'VERSION_CONFLICT' || /version/i.test(err.message))) {
    const now = err.body?.['version'];
    return `Conflict: the player changed since this page loaded it${typeof now === 'number' ? ` (now version ${now})` : ''}. Nothing was written. Reload to see the current data; your edit is still in the editor.`;
  }
  return undefined;
}

export function PlayerPage(props: { workspaceId: string; userId: string }) {
  const { workspaceId, userId } = props;
  const player = useLoad(() => loadPlayer(workspaceId, userId), [workspaceId, userId]);
  const [note, setNote] = useState<string | undefined>();
  const [editing, setEditing] = useState<string | undefined>();
  const [filter, setFilter] = useState('');
  const action = useAction();
  const loaded = player.data;
  const keys = useMemo(() => {
    const all = Object.keys(loaded?.data ?? {}).sort();
    return filter ? all.filter((k) => k.toLowerCase().includes(filter.toLowerCase())) : all;
  }, [loaded, filter]);
  const pages = usePages(keys, 25);
  const base = `/workspaces/${enc(workspaceId)}/players/${enc(userId)}`;

  /** Writes one key with the loaded version; without versions, refuses when the key moved on. */
  const write = (key: string, value: unknown, loadedAt: string | undefined) =>
    action.run(async () => {
      if (!loaded) return;
      if (loaded.version === undefined && loadedAt !== undefined) {
        let current: string | undefined;
        try {
          current = (await adminData<Entry>('GET', `${base}?key=${enc(key)}`)).updated_at;
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 404)) throw err;
        }
        if (current !== loadedAt) {
          throw new Conflict(`Conflict: "${key}" changed since this page loaded it (${current ? `written ${time(current)}` : 'deleted'}). Nothing was written. Reload to see the current value; your edit is still in the editor.`);
        }
      }
      await adminData('PUT', base, { key, value, ...(loaded.version === undefined ? {} : { ifVersion: loaded.version }) });
      setEditing(undefined);
      setNote(`Saved "${key}".`);
      player.reload();
    });

  const exportFile = () => {
    if (!loaded) return;
    const body = JSON.stringify({ workspaceId, userId, exportedAt: loaded.exportedAt, version: loaded.version, data: loaded.data }, null, 2);
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([body], { type: 'application/json' }));
    link.download = `player-${workspaceId}-${userId}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };

  const conflict = conflictText(action.error);
  return html`<p><${Link} href=${paths.workspace(workspaceId)}>← Workspace ${workspaceId}</${Link}></p>
    <h1>Player <span class="mono">${userId}</span></h1>
    <${ErrorNote} error=${player.error} />
    ${loaded
      ? html`<p class="meta">
          ${loaded.found ? `${Object.keys(loaded.data).length} keys; loaded ${time(loaded.exportedAt)}` : 'This player has no data.'}
          ${loaded.version !== undefined ? html`; version <strong data-testid="player-version">${loaded.version}</strong>` : null}
          ${loaded.session ? html`; session held by <strong>${String(loaded.session['owner'] ?? '?')}</strong> until ${time(String(loaded.session['expiresAt'] ?? ''))}` : null}
        </p>
        <div class="row">
          <button type="button" class="secondary" onClick=${() => player.reload()}>Reload</button>
          ${loaded.found ? html`<button type="button" class="secondary" onClick=${exportFile}>Export as JSON file</button>` : null}
        </div>
        <${Notice} text=${note} />
        ${conflict ? html`<p class="error" role="alert">${conflict}</p>` : html`<${ErrorNote} error=${action.error} />`}
        ${loaded.found
          ? html`<div class="row"><label for="key-filter">Filter keys</label>
              <input id="key-filter" type="search" value=${filter} onInput=${(e: Event) => {
                setFilter((e.target as HTMLInputElement).value);
                pages.setPage(0);
              }} /></div>`
          : null}
        ${pages.shown.map((key) => {
          const entry = loaded.data[key]!;
          const slug = `k${keys.indexOf(key)}`;
          return html`<article class="entry" key=${key} aria-labelledby=${`${slug}-h`}>
            <h3 id=${`${slug}-h`} class="mono">${key}</h3>
            <p class="meta">updated_at ${time(entry.updated_at)}</p>
            ${editing === key
              ? html`<${JsonEditor} id=${`${slug}-edit`} label=${`New value of ${key} (JSON)`} initial=${JSON.stringify(entry.value, null, 2)}
                  busy=${action.busy} submitLabel="Save" onCancel=${() => setEditing(undefined)}
                  onSubmit=${(value: unknown) => void write(key, value, entry.updated_at)} />`
              : html`<${JsonView} value=${entry.value} label=${`Value of ${key}`} />
                <div class="row">
                  <button type="button" class="secondary" aria-label=${`Edit ${key}`} onClick=${() => {
                    action.setError(undefined);
                    setEditing(key);
                  }}>Edit</button>
                  <button type="button" class="destructive" aria-label=${`Delete key ${key}`} disabled=${action.busy} onClick=${() => {
                    if (!confirm(`Delete the key "${key}" of player ${userId}?`)) return;
                    void action.run(async () => {
                      await adminData('DELETE', `${base}?key=${enc(key)}`);
                      setNote(`Deleted "${key}".`);
                      player.reload();
                    });
                  }}>Delete key</button>
                </div>`}
          </article>`;
        })}
        <${Pager} label="Keys" ...${pages} />
        <section aria-labelledby="add-h">
          <h2 id="add-h">Add a key</h2>
          <${AddKey} busy=${action.busy} onAdd=${(key: string, value: unknown) => {
            if (loaded.data[key]) {
              action.setError(new Error(`"${key}" exists: edit it instead.`));
              return;
            }
            void write(key, value, undefined);
          }} />
        </section>
        ${loaded.found
          ? html`<section aria-labelledby="del-player-h">
              <h2 id="del-player-h">Delete the player</h2>
              <${TypedConfirm} id="delete-player" word=${userId} what="delete every key of this player" button="Delete player" busy=${action.busy}
                onConfirm=${() => void action.run(async () => {
                  await adminData('DELETE', base);
                  navigate(paths.workspace(workspaceId));
                })} />
            </section>`
          : null}`
      : player.loading
        ? html`<p role="status">Loading…</p>`
        : null}`;
}

function AddKey(props: { busy: boolean; onAdd: (key: string, value: unknown) => void }) {
  const [key, setKey] = useState('');
  return html`<div>
    <label for="new-key">Key</label>
    <input id="new-key" maxlength="128" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} />
    <${JsonEditor} id="new-value" label="Value (JSON)" initial="" busy=${props.busy || !key.trim()} submitLabel="Add key"
      onSubmit=${(value: unknown) => props.onAdd(key.trim(), value)} />
  </div>`;
}
