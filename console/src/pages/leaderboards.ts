// A workspace's leaderboards on its page: each board with its periods, followed key and entries
// now, linked to the board's own page (leaderboard.ts).
import { paths } from '../router.js';
import { ErrorNote, html, Link, useLoad } from '../ui.js';
import { adminData, enc } from '../api.js';

export interface BoardSummary {
  board: string;
  periods: string[];
  follow?: { key: string };
  createdAt: string;
  entries: Array<{ period: string; id: string; entries: number }>;
}

export function LeaderboardsSection(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const boards = useLoad(() => adminData<BoardSummary[]>('GET', `/workspaces/${enc(id)}/leaderboards`), [id]);
  const list = boards.data ?? [];
  return html`<section aria-labelledby="boards-h">
    <h2 id="boards-h">Leaderboards</h2>
    <${ErrorNote} error=${boards.error} />
    ${boards.loading && list.length === 0 ? html`<p role="status">Loading…</p>` : null}
    ${!boards.loading && list.length === 0 ? html`<p>No leaderboards yet: a board starts with its first write.</p>` : null}
    ${list.length > 0
      ? html`<div class="table-wrap"><table>
          <caption class="visually-hidden">Leaderboards of the workspace</caption>
          <thead><tr><th scope="col">Board</th><th scope="col">Periods</th><th scope="col">Follows</th><th scope="col">Entries now</th></tr></thead>
          <tbody>${list.map(
            (b) => html`<tr key=${b.board}>
              <td><${Link} href=${paths.leaderboard(id, b.board)} class="mono">${b.board}</${Link}></td>
              <td>${b.periods.join(', ')}</td>
              <td class="mono">${b.follow?.key ?? '—'}</td>
              <td>${b.entries.map((e) => `${e.period} ${e.entries.toLocaleString('en')}`).join(', ')}</td>
            </tr>`,
          )}</tbody></table></div>`
      : null}
  </section>`;
}
