// /console/workspaces/<id>/leaderboards: a workspace's boards, each with its periods, followed
// key and entries now, linked to the board's own page (leaderboard.ts).
import { paths } from '../router.js';
import { ErrorNote, html, Link, useLoad } from '../ui.js';
import { adminData, enc } from '../api.js';
import { WorkspaceHeader } from './workspace-nav.js';
import type { Workspace } from './workspaces.js';

export interface BoardSummary {
  board: string;
  periods: string[];
  follow?: { key: string };
  createdAt: string;
  entries: Array<{ period: string; id: string; entries: number }>;
}

export const entriesText = (b: BoardSummary) => b.entries.map((e) => `${e.period} ${e.entries.toLocaleString('en')}`).join(', ');

export function LeaderboardsPage(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const workspace = useLoad(() => adminData<Workspace>('GET', `/workspaces/${enc(id)}`), [id]);
  const boards = useLoad(() => adminData<BoardSummary[]>('GET', `/workspaces/${enc(id)}/leaderboards`), [id]);
  const list = boards.data ?? [];
  return html`<${WorkspaceHeader} workspaceId=${id} current="leaderboards" title="Leaderboards" name=${workspace.data?.name} />
    <p class="hint">Open a board for its top page, a player's rank, and to remove an entry.</p>
    <${ErrorNote} error=${boards.error} />
    ${boards.loading && list.length === 0 ? html`<p role="status">Loading…</p>` : null}
    ${!boards.loading && !boards.error && list.length === 0 ? html`<p>No leaderboards yet: a board starts with its first write.</p>` : null}
    ${list.length > 0
      ? html`<div class="table-wrap"><table class="cards">
          <caption class="visually-hidden">Leaderboards of the workspace</caption>
          <thead><tr><th scope="col">Board</th><th scope="col">Periods</th><th scope="col">Follows</th><th scope="col">Entries now</th></tr></thead>
          <tbody>${list.map(
            (b) => html`<tr key=${b.board}>
              <td data-label="Board"><${Link} href=${paths.leaderboard(id, b.board)} class="mono">${b.board}</${Link}></td>
              <td data-label="Periods">${b.periods.join(', ')}</td>
              <td data-label="Follows"><span class="mono">${b.follow?.key ?? '—'}</span></td>
              <td data-label="Entries now">${entriesText(b)}</td>
            </tr>`,
          )}</tbody></table></div>`
      : null}`;
}
