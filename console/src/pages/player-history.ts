// The History section of the player page: the versions the service still retains, newest
// first, 20 a page; view the whole player at one of them; restore one (as a new version) after
// a confirmation, with the option to end a game server's session first when one holds the
// player (docs/history.md, "Restore").
import { useEffect, useRef, useState } from 'preact/hooks';
import { adminData, ApiError, enc } from '../api.js';
import { changes, pathText, type Change } from '../json.js';
import { ErrorNote, html, JsonTree, time, useAction, useLoad } from '../ui.js';

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
  /** The player's data as the page shows it: what a restore is compared with. */
  current: Record<string, { value: unknown; updated_at: string }>;
  onRestored: () => void;
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
  const target = useLoad(
    () => (restoring === undefined ? Promise.resolve(undefined) : adminData<AtVersion>('GET', `${base}/history/${restoring}`)),
    [base, restoring],
  );
  const [force, setForce] = useState(false);
  const [done, setDone] = useState<string | undefined>();
  const doneRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done) doneRef.current?.focus();
  }, [done]);
  const action = useAction();

  const restore = (version: number) =>
    action.run(async () => {
      const done = await adminData<{ version: number; set: number; deleted: number; endedSession: { owner: string } | null }>('POST', `${base}/restore`, {
        version,
        ...(force ? { force: true } : {}),
      });
      // What was open shows the data before the restore: closed, and the result said here,
      // where the operator is looking.
      setRestoring(undefined);
      setViewing(undefined);
      setForce(false);
      setCursors([undefined]);
      setDone(
        `Restored version ${version} as version ${done.version} (${done.set} ${done.set === 1 ? 'key' : 'keys'} written, ${done.deleted} deleted)` +
          `${done.endedSession ? `; ended the session of ${done.endedSession.owner}` : ''}. The data above is the restored data.`,
      );
      props.onRestored();
    });

  const page = list.data;
  const sessionLocked = action.error instanceof ApiError && action.error.code === 'SESSION_LOCKED';
  return html`<section aria-labelledby="history-h">
    <h2 id="history-h">History</h2>
    <p class="meta">The current version, then the restore points the service keeps (docs/history.md): each is the player as it was just before the time shown, and names the first write after it and the keys written after it. A restore writes the data of that version as a new version; nothing in between is lost.</p>
    <${ErrorNote} error=${list.error} />
    ${done ? html`<p class="notice" role="status" tabindex="-1" ref=${doneRef} data-testid="restore-result">${done}</p>` : null}
    ${page
      ? html`<div class="table-wrap"><table class="cards">
          <caption class="visually-hidden">Versions of the player, newest first</caption>
          <thead><tr><th scope="col">Version</th><th scope="col">Until</th><th scope="col">Next write</th><th scope="col">By</th><th scope="col">Keys changed after</th><th scope="col">Actions</th></tr></thead>
          <tbody>${page.versions.map(
            (v) => html`<tr key=${v.version}>
              <td data-label="Version" class="mono">${v.version}${v.version === page.version ? ' (current)' : ''}</td>
              <td data-label="Until">${v.time ? time(v.time) : '—'}</td>
              <td data-label="Next write">${v.kind ?? (v.version === page.version ? 'now' : 'no data yet')}</td>
              <td data-label="By" class="mono">${v.by ?? '—'}</td>
              <td data-label="Keys changed after" class="mono">${v.keys ? v.keys.join(', ') : '—'}</td>
              <td data-label="Actions"><div class="row">
                <button type="button" class="secondary" aria-label=${`View version ${v.version}`} onClick=${() => setViewing(v.version)}>View</button>
                ${v.version === page.version
                  ? null
                  : html`<button type="button" class="secondary" aria-label=${`Restore version ${v.version}`} onClick=${() => {
                      action.setError(undefined);
                      setDone(undefined);
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
          <${ErrorNote} error=${target.error} />
          ${target.data ? html`<${WhatWillChange} now=${props.current} then=${target.data.data} version=${restoring} />` : target.loading ? html`<p role="status">Comparing with version ${restoring}…</p>` : null}
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
                    <${JsonTree} value=${entry.value} label=${`Value of ${key} at version ${viewing}`} name=${key} />
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

const short = (v: unknown) => {
  const text = JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

/** "What will change": the current data against the version to restore, path by path. */
function WhatWillChange(props: { now: Record<string, { value: unknown }>; then: Record<string, { value: unknown }>; version: number }) {
  const values = (d: Record<string, { value: unknown }>) => Object.fromEntries(Object.entries(d).map(([k, e]) => [k, e.value]));
  const list: Change[] = changes(values(props.now), values(props.then));
  return html`<div role="region" aria-label="What will change">
    <h4>What will change</h4>
    ${list.length === 0
      ? html`<p>Nothing: version ${props.version} holds the same data as now (the keys are written again, as a version of their own).</p>`
      : html`<div class="table-wrap"><table class="cards diff">
          <caption class="visually-hidden">Differences between now and version ${props.version}</caption>
          <thead><tr><th scope="col">Path</th><th scope="col">Change</th><th scope="col">Now</th><th scope="col">After the restore</th></tr></thead>
          <tbody>${list.map(
            (c) => html`<tr key=${pathText(c.path)} class=${`diff-${c.kind}`}>
              <td data-label="Path" class="mono">${pathText(c.path)}</td>
              <td data-label="Change">${c.kind === 'added' ? 'comes back' : c.kind === 'removed' ? 'removed' : 'changed'}</td>
              <td data-label="Now" class="mono">${c.kind === 'added' ? '—' : short(c.now)}</td>
              <td data-label="After the restore" class="mono">${c.kind === 'removed' ? '—' : short(c.then)}</td>
            </tr>`,
          )}</tbody>
        </table></div>`}
  </div>`;
}
