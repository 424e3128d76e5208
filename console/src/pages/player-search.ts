// /console/players?userId=<id>: a user id looked up in every workspace (a support ticket names a
// player and no game). GET /admin/v1/players/search checks a bounded page of workspaces a call;
// the page asks for the next page until every workspace is checked (at most PAGES calls, then
// "Search on"), showing each workspace where the player has data, by its name.
import { useEffect, useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { paths, setSearchParam, useSearch } from '../router.js';
import { ErrorNote, html, Link, size, time } from '../ui.js';

interface Match {
  workspaceId: string;
  name: string;
  lastWriteAt: string | null;
  version: number;
  keys: number | null;
  bytes: number | null;
  session: { owner: string; expiresAt: string } | null;
}
interface Answer {
  userId: string;
  checked: number;
  workspaces: number;
  matches: Match[];
  next: string | null;
}

/** Calls per search before the page asks the operator to go on (100 workspaces a call). */
const PAGES = 10;

export function PlayerSearchPage() {
  const params = useSearch();
  const asked = params.get('userId') ?? '';
  const [text, setText] = useState(asked);
  const [state, setState] = useState<{ matches: Match[]; checked: number; workspaces: number; next: string | null; busy: boolean; error?: unknown }>({
    matches: [], checked: 0, workspaces: 0, next: null, busy: false,
  });
  const run = async (userId: string, from: string | null, before: Match[], checkedBefore: number) => {
    let cursor = from;
    let matches = before;
    let checked = checkedBefore;
    setState((s) => ({ ...s, busy: true, error: undefined }));
    try {
      for (let i = 0; i < PAGES; i++) {
        const a = await adminData<Answer>('GET', `/players/search?userId=${enc(userId)}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
        matches = [...matches, ...a.matches];
        checked += a.checked;
        cursor = a.next;
        setState({ matches, checked, workspaces: a.workspaces, next: cursor, busy: cursor !== null && i < PAGES - 1 });
        if (cursor === null) break;
      }
    } catch (error) {
      setState((s) => ({ ...s, busy: false, error }));
    }
  };
  useEffect(() => {
    setText(asked);
    setState({ matches: [], checked: 0, workspaces: 0, next: null, busy: false });
    if (asked) void run(asked, null, [], 0);
  }, [asked]);
  const done = asked && !state.busy && state.next === null && !state.error;
  return html`<h1>Find a player</h1>
    <p class="hint">Looks for a user id in every workspace: for a support ticket that names the player but not the game.</p>
    <form class="inline-form" role="search" aria-label="Find a player in every workspace" onSubmit=${(e: Event) => {
      e.preventDefault();
      if (text.trim()) setSearchParam('userId', text.trim());
    }}>
      <div><label for="search-user">User id</label><input id="search-user" class="mono" required maxlength="64" autocomplete="off" value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>
      <div><button type="submit" disabled=${state.busy}>Search every workspace</button></div>
    </form>
    <${ErrorNote} error=${state.error} />
    ${asked
      ? html`<p class="meta" role="status" data-testid="search-status">${state.busy
          ? `Searching… ${state.checked} of ${state.workspaces || '?'} workspaces checked.`
          : done
            ? `Player ${asked}: in ${state.matches.length} of ${state.workspaces} workspaces.`
            : `${state.checked} of ${state.workspaces} workspaces checked.`}</p>
        ${!state.busy && state.next !== null && !state.error
          ? html`<button type="button" class="secondary" onClick=${() => void run(asked, state.next, state.matches, state.checked)}>Search on</button>`
          : null}
        ${state.matches.length > 0
          ? html`<div class="table-wrap"><table class="cards compact">
              <caption class="visually-hidden">Workspaces where the player has data</caption>
              <thead><tr><th scope="col">Workspace</th><th scope="col">Last write</th><th scope="col">Version</th><th scope="col">Keys</th><th scope="col">Size</th><th scope="col">Held by</th></tr></thead>
              <tbody>${state.matches.map(
                (m) => html`<tr key=${m.workspaceId}>
                  <td data-label="Workspace"><${Link} href=${paths.player(m.workspaceId, asked)}>${m.name}</${Link}> <span class="meta mono">${m.workspaceId}</span></td>
                  <td data-label="Last write">${m.lastWriteAt ? time(m.lastWriteAt) : 'before the list'}</td>
                  <td data-label="Version">${m.version}</td>
                  <td data-label="Keys">${m.keys ?? '—'}</td>
                  <td data-label="Size">${m.bytes === null ? '—' : size(m.bytes)}</td>
                  <td data-label="Held by">${m.session ? html`<span class="held">${m.session.owner}</span> until ${time(m.session.expiresAt)}` : 'no server'}</td>
                </tr>`,
              )}</tbody></table></div>`
          : done ? html`<p>No workspace holds data for player <span class="mono">${asked}</span>.</p>` : null}`
      : null}`;
}
