// /console/workspaces/<id>/players: the workspace's players, newest written first, 25 a page,
// with each one's version, size and the game server holding it; search by user id (exact, or
// every id starting with what is typed). Read from the players list the write path keeps
// (GET /admin/v1/workspaces/:id/players): a page costs the same for a hundred players or a million.
import { useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { paths } from '../router.js';
import { ErrorNote, html, Link, size, Tabs, time, useLoad } from '../ui.js';
import { WorkspaceHeader } from './workspace-nav.js';
import type { Workspace } from './workspaces.js';

interface Row {
  userId: string;
  lastWriteAt: string | null;
  version: number;
  keys: number | null;
  bytes: number | null;
  session: { owner: string; expiresAt: string } | null;
}
interface Page {
  listed: number;
  players: Row[];
  next: string | null;
}
interface Query {
  mode: 'newest' | 'exact' | 'prefix';
  text: string;
}

const LIMIT = 25;
/** Columns of the grid at most: the page's keys, most common first. */
const GRID_COLUMNS = 40;

/** A value as one short line of JSON for a grid cell (the whole of it in the cell's title). */
function cellText(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * The page's players as a table editor shows a table: a row a player, a column a data key,
 * each cell the value in short. Reads each shown player (`?purpose=view`: a person sees their
 * data, so each is audited as player.view, as opening the player's page is).
 */
function PlayerGrid(props: { workspaceId: string; rows: Row[] }) {
  const ids = props.rows.map((r) => r.userId);
  const data = useLoad(
    () =>
      Promise.all(
        ids.map((userId) =>
          adminData<{ data: Record<string, { value: unknown }> }>('GET', `/workspaces/${enc(props.workspaceId)}/players/${enc(userId)}?purpose=view`).then(
            (p) => [userId, p.data] as const,
            () => [userId, {} as Record<string, { value: unknown }>] as const,
          ),
        ),
      ),
    [props.workspaceId, ids.join('\n')],
  );
  if (data.loading && !data.data) return html`<p role="status">Loading the players' data…</p>`;
  const players = data.data ?? [];
  const seen = new Map<string, number>();
  for (const [, d] of players) for (const k of Object.keys(d)) seen.set(k, (seen.get(k) ?? 0) + 1);
  const columns = [...seen.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, GRID_COLUMNS).map(([k]) => k);
  return html`<${ErrorNote} error=${data.error} />
    <p class="meta">${players.length} players, ${seen.size} keys${seen.size > columns.length ? ` (the ${columns.length} most common shown)` : ''}. Open a player to edit a value.</p>
    <div class="grid-wrap" tabindex="0" role="region" aria-label="Players grid, scrolls sideways">
    <table class="grid" data-testid="players-grid">
      <caption class="visually-hidden">Players and their data keys</caption>
      <thead><tr><th scope="col">User id</th>${columns.map((c) => html`<th scope="col" class="mono" key=${c}>${c}</th>`)}</tr></thead>
      <tbody>${players.map(
        ([userId, d]) => html`<tr key=${userId}>
          <th scope="row"><${Link} href=${paths.player(props.workspaceId, userId)} class="mono">${userId}</${Link}></th>
          ${columns.map((c) => (c in d ? html`<td class="cell" key=${c} title=${JSON.stringify(d[c]!.value)}>${cellText(d[c]!.value)}</td>` : html`<td class="empty" key=${c}>—</td>`))}
        </tr>`,
      )}</tbody>
    </table></div>`;
}

function PlayerTable(props: { workspaceId: string; rows: Row[] }) {
  return html`<div class="table-wrap"><table class="cards">
    <caption class="visually-hidden">Players</caption>
    <thead><tr><th scope="col">User id</th><th scope="col">Last write</th><th scope="col">Version</th><th scope="col">Keys</th><th scope="col">Size</th><th scope="col">Held by</th></tr></thead>
    <tbody>${props.rows.map(
      (p) => html`<tr key=${p.userId}>
        <td data-label="User id"><${Link} href=${paths.player(props.workspaceId, p.userId)} class="mono">${p.userId}</${Link}></td>
        <td data-label="Last write">${p.lastWriteAt ? time(p.lastWriteAt) : 'before the list'}</td>
        <td data-label="Version">${p.version}</td>
        <td data-label="Keys">${p.keys ?? '—'}</td>
        <td data-label="Size">${p.bytes === null ? '—' : size(p.bytes)}</td>
        <td data-label="Held by">${p.session ? html`<span class="held">${p.session.owner}</span> until ${time(p.session.expiresAt)}` : 'no server'}</td>
      </tr>`,
    )}</tbody>
  </table></div>`;
}

export function PlayersPage(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const workspace = useLoad(() => adminData<Workspace>('GET', `/workspaces/${enc(id)}`), [id]);
  const [query, setQuery] = useState<Query>({ mode: 'newest', text: '' });
  // The cursors of the pages shown so far: the last one is the current page's.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const [text, setText] = useState('');
  const [mode, setMode] = useState<'exact' | 'prefix'>('prefix');
  // Each answer keeps the page number and query it was asked with: until the next page has
  // arrived the rows shown are the last page's, and the status line must describe those rows.
  const number = cursors.length;
  const page = useLoad(async () => {
    const q = [`limit=${LIMIT}`];
    if (cursor) q.push(`cursor=${enc(cursor)}`);
    if (query.mode === 'exact') q.push(`userId=${enc(query.text)}`);
    if (query.mode === 'prefix') q.push(`prefix=${enc(query.text)}`);
    return { number, query, ...(await adminData<Page>('GET', `/workspaces/${enc(id)}/players?${q.join('&')}`)) };
  }, [id, query, cursor]);
  const search = (next: Query) => {
    setQuery(next);
    setCursors([undefined]);
  };
  const data = page.data;
  // The rows shown are not yet those asked for: the pager waits for them.
  const stale = page.loading || data?.number !== number || data.query !== query;
  return html`<${WorkspaceHeader} workspaceId=${id} current="players" title="Players" name=${workspace.data?.name} />
    <form class="inline-form" role="search" aria-label="Find players" onSubmit=${(e: Event) => {
      e.preventDefault();
      const t = text.trim();
      search(t ? { mode, text: t } : { mode: 'newest', text: '' });
    }}>
      <div><label for="player-search">User id</label><input id="player-search" value=${text} maxlength="64" autocomplete="off"
        onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>
      <div><label for="player-search-mode">Match</label>
        <select id="player-search-mode" value=${mode} onChange=${(e: Event) => setMode((e.target as HTMLSelectElement).value as 'exact' | 'prefix')}>
          <option value="prefix">ids starting with it</option><option value="exact">exactly this id</option>
        </select></div>
      <div><button type="submit">Search</button></div>
      ${query.mode !== 'newest' ? html`<div><button type="button" class="secondary" onClick=${() => {
        setText('');
        search({ mode: 'newest', text: '' });
      }}>Show all players</button></div>` : null}
    </form>
    <${ErrorNote} error=${page.error} />
    ${data
      ? html`<p class="meta" role="status">${data.query.mode === 'newest'
          ? `${data.listed.toLocaleString('en')} players on the list, newest written first; page ${data.number}.`
          : data.query.mode === 'exact'
            ? data.players.length ? `Player ${data.query.text}.` : `No player ${data.query.text} in this workspace.`
            : `${data.players.length} ${data.players.length === 1 ? 'player' : 'players'} whose id starts with "${data.query.text}"${data.next ? ' so far' : ''}.`}</p>
        ${data.players.length > 0 ? html`<${Tabs} label="Show the players as" param="view" tabs=${[
          { id: 'list', label: 'List', render: () => html`<${PlayerTable} workspaceId=${id} rows=${data.players} />` },
          { id: 'grid', label: 'Grid of keys', render: () => html`<${PlayerGrid} workspaceId=${id} rows=${data.players} />` },
        ]} />` : data.query.mode === 'newest' ? html`<p>No player on the list yet. Players appear once written; those written before the list existed appear after <code>pds player index --workspace ${id}</code>.</p>` : null}
        <nav class="pager" aria-label="Players pages">
          <button type="button" disabled=${stale || data.number <= 1} onClick=${() => setCursors([undefined])}>First page</button>
          <button type="button" disabled=${stale || data.next === null} onClick=${() => setCursors([...cursors, data.next ?? undefined])}>${data.query.mode === 'prefix' ? 'More matches' : 'Next page'}</button>
        </nav>`
      : page.loading
        ? html`<p role="status">Loading…</p>`
        : null}`;
}
