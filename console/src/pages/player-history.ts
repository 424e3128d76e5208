// The History section of the player page: the versions the service still retains, newest
// first, 20 a page; view the whole player at one of them; restore one (as a new version) after
// a confirmation, with the option to end a game server's session first when one holds the
// player (docs/history.md, "Restore").
import { useState } from 'preact/hooks';
import { adminData, ApiError, enc } from '../api.js';
import { ErrorNote, html, JsonView, time, useAction, useLoad } from '../ui.js';

interface HistoryVersion {
  version: number;
  time: string | null;
  kind: string | null;
  by: string | null;
  keys: string[] | null;
}

interface HistoryPage {
  version: number;
  versions: HistoryVersion[];
  nextBefore: number | null;
}

interface AtVersion {
  version: number;
  currentVersion: number;
  data: Record<string, { value: unknown; updated_at: string }>;
}

const PAGE = 20;

export function PlayerHistory(props: {
  workspaceId: string;
  userId: string;
  /** The player's version as the page loaded it: the list reloads when it changes. */
  version: number;
  /** The game server holding the player, if any: a restore then needs force. */
  sessionOwner: string | undefined;
  onRestored: (message: string) => void;
}) {
  const base = `/workspaces/${enc(props.workspaceId)}/players/${enc(props.userId)}`;
  // The `before` cursor of each page shown so far: the last is the current page's.
  const [cursors, setCursors] = useState<Array<number | undefined>>([undefined]);
  const before = cursors[cursors.length - 1];
  const list = useLoad(
    () => adminData<HistoryPage>('GET', `${base}/history?limit=${PAGE}${before === undefined ? '' : `&before=${before}`}`),
    [base, before, props.version],
  );
  const [viewing, setViewing] = useState<number | undefined>();
  const shown = useLoad(
    () => (viewing === undefined ? Promise.resolve(undefined) : adminData<AtVersion>('GET', `${base}/history/${viewing}`)),
    [base, viewing],
  );
  const [restoring, setRestoring] = useState<number | undefined>();
  const [force, setForce] = useState(false);
  const action = useAction();

  const restore = (version: number) =>
    action.run(async () => {
      const done = await adminData<{ version: number; endedSession: { owner: string } | null }>('POST', `${base}/restore`, {
        version,
        ...(force ? { force: true } : {}),
      });
      setRestoring(undefined);
      setForce(false);
      setCursors([undefined]);
      const message = `Restored version ${version} as version ${done.version}${done.endedSession ? `; ended the session of ${done.endedSession.owner}` : ''}.`;
      props.onRestored(message);
    });

  const page = list.data;
  const sessionLocked = action.error instanceof ApiError && action.error.code === 'SESSION_LOCKED';
  return html`<section aria-labelledby="history-h">
    <h2 id="history-h">History</h2>
    <p class="meta">The current version, then the restore points the service keeps (docs/history.md): each is the player as it was just before the time shown, and names the first write after it and the keys written after it. A restore writes the data of that version as a new version; nothing in between is lost.</p>
    <${ErrorNote} error=${list.error} />
    ${page
      ? html`<div class="table-wrap"><table>
          <caption class="visually-hidden">Versions of the player, newest first</caption>
          <thead><tr><th scope="col">Version</th><th scope="col">Until</th><th scope="col">Next write</th><th scope="col">By</th><th scope="col">Keys changed after</th><th scope="col">Actions</th></tr></thead>
          <tbody>${page.versions.map(
            (v) => html`<tr key=${v.version}>
              <td class="mono">${v.version}${v.version === page.version ? ' (current)' : ''}</td>
              <td>${v.time ? time(v.time) : '—'}</td>
              <td>${v.kind ?? (v.version === page.version ? 'now' : 'no data yet')}</td>
              <td class="mono">${v.by ?? '—'}</td>
              <td class="mono">${v.keys ? v.keys.join(', ') : '—'}</td>
              <td><div class="row">
                <button type="button" class="secondary" aria-label=${`View version ${v.version}`} onClick=${() => setViewing(v.version)}>View</button>
                ${v.version === page.version
                  ? null
                  : html`<button type="button" class="secondary" aria-label=${`Restore version ${v.version}`} onClick=${() => {
                      action.setError(undefined);
                      setForce(false);
                      setRestoring(v.version);
                    }}>Restore</button>`}
              </div></td>
            </tr>`,
          )}</tbody></table></div>
          <nav class="pager" aria-label="History pages">
            <button type="button" disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer versions</button>
            <button type="button" disabled=${page.nextBefore === null} onClick=${() => setCursors([...cursors, page.nextBefore ?? undefined])}>Older versions</button>
          </nav>`
      : list.loading
        ? html`<p role="status">Loading the history…</p>`
        : null}
    ${restoring !== undefined
      ? html`<div class="warning" role="dialog" aria-modal="false" aria-labelledby="restore-h">
          <h3 id="restore-h">Restore version ${restoring}?</h3>
          <p>The player's data becomes what it was at version ${restoring}, as a new version. The current data stays in the history and can be restored in turn.</p>
          ${props.sessionOwner
            ? html`<p>A game server holds this player (session of <strong class="mono">${props.sessionOwner}</strong>): it would overwrite the restore with what it has in memory, so the restore is refused unless its session is ended first. Its next save then fails (SESSION_LOST) and it must load the player again.</p>
              <label class="row"><input type="checkbox" checked=${force} onChange=${(e: Event) => setForce((e.target as HTMLInputElement).checked)} />
                End the game server's session first</label>`
            : null}
          ${sessionLocked ? html`<p class="error" role="alert">${(action.error as ApiError).describe()}</p>` : html`<${ErrorNote} error=${action.error} />`}
          <div class="row">
            <button type="button" class="destructive" disabled=${action.busy} onClick=${() => void restore(restoring)}>Restore version ${restoring}</button>
            <button type="button" onClick=${() => setRestoring(undefined)}>Cancel</button>
          </div>
        </div>`
      : null}
    ${viewing !== undefined
      ? html`<div role="region" aria-label=${`Version ${viewing}`}>
          <h3>Version ${viewing}${shown.data ? ` of ${shown.data.currentVersion}` : ''}</h3>
          <${ErrorNote} error=${shown.error} />
          ${shown.data
            ? Object.keys(shown.data.data).length === 0
              ? html`<p>The player had no data at this version.</p>`
              : Object.entries(shown.data.data).map(
                  ([key, entry]) => html`<article class="entry" key=${key}>
                    <h4 class="mono">${key}</h4>
                    <p class="meta">updated_at ${time(entry.updated_at)}</p>
                    <${JsonView} value=${entry.value} label=${`Value of ${key} at version ${viewing}`} />
                  </article>`,
                )
            : shown.loading
              ? html`<p role="status">Loading…</p>`
              : null}
          <button type="button" class="secondary" onClick=${() => setViewing(undefined)}>Close version ${viewing}</button>
        </div>`
      : null}
  </section>`;
}
