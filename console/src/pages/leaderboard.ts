// /console/workspaces/<id>/leaderboards/<board>: one board a page at a time (period, order, the
// cursor's next page), remove a player from it, reset it (typing its name), and the periods
// every write goes to.
import { useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { paths } from '../router.js';
import { ErrorNote, html, Link, Notice, TypedConfirm, useAction, useLoad } from '../ui.js';
import type { BoardSummary } from './leaderboards.js';

interface BoardPage {
  board: string;
  period: string;
  periodId: string;
  entries: Array<{ rank: number; userId: string; score: number }>;
  next: string | null;
}

const PERIODS = ['all', 'daily', 'weekly', 'monthly'];
const PAGE = 20;

function Periods(props: { workspaceId: string; board: string; kept: string[]; onChanged: (note: string) => void }) {
  const [chosen, setChosen] = useState(props.kept);
  const action = useAction();
  const toggle = (p: string) => setChosen(chosen.includes(p) ? chosen.filter((c) => c !== p) : [...chosen, p]);
  return html`<form class="row" onSubmit=${(e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await adminData('PATCH', `/workspaces/${enc(props.workspaceId)}/leaderboards/${enc(props.board)}`, { periods: chosen });
      props.onChanged(`Every write now goes to ${PERIODS.filter((p) => chosen.includes(p)).join(', ')}.`);
    });
  }}>
    <fieldset><legend>Periods every write goes to</legend>
      ${PERIODS.map((p) => html`<label key=${p}><input type="checkbox" checked=${chosen.includes(p)} onChange=${() => toggle(p)} /> ${p}</label>`)}
    </fieldset>
    <button type="submit" disabled=${action.busy || chosen.length === 0}>Save periods</button>
    <${ErrorNote} error=${action.error} />
  </form>`;
}

export function LeaderboardPage(props: { workspaceId: string; board: string }) {
  const { workspaceId, board } = props;
  const base = `/workspaces/${enc(workspaceId)}/leaderboards/${enc(board)}`;
  const [period, setPeriod] = useState('all');
  const [previous, setPrevious] = useState(false);
  const [order, setOrder] = useState('desc');
  // The cursors of the pages read so far: back goes to the one before, as the service has no offsets.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const after = cursors[cursors.length - 1];
  const summary = useLoad(
    async () => (await adminData<BoardSummary[]>('GET', `/workspaces/${enc(workspaceId)}/leaderboards`)).find((b) => b.board === board),
    [workspaceId, board],
  );
  const page = useLoad(() => {
    const query = new URLSearchParams({ period, order, limit: String(PAGE), ...(previous ? { previous: 'true' } : {}), ...(after ? { after } : {}) });
    return adminData<BoardPage>('GET', `${base}?${query}`);
  }, [base, period, previous, order, after]);
  const [note, setNote] = useState<string | undefined>();
  const action = useAction();
  const restart = (set: () => void) => {
    set();
    setCursors([undefined]);
  };
  const reload = (text: string) => {
    setNote(text);
    summary.reload();
    page.reload();
  };
  const s = summary.data;
  const p = page.data;
  return html`<p><${Link} href=${paths.workspace(workspaceId)}>← Workspace</${Link}></p>
    <h1>Leaderboard ${board} <span class="meta mono">${workspaceId}</span></h1>
    ${s ? html`<p class="meta">Keeps ${s.periods.join(', ')}${s.follow ? `; follows the key ${s.follow.key}` : ''}; ${s.entries.map((e) => `${e.period} ${e.entries.toLocaleString('en')}`).join(', ')} entries now.</p>` : null}
    <${ErrorNote} error=${summary.error} />
    <${Notice} text=${note} />
    <section aria-labelledby="entries-h">
      <h2 id="entries-h">Entries</h2>
      <div class="row">
        <div><label for="board-period">Period</label>
          <select id="board-period" value=${period} onChange=${(e: Event) => restart(() => setPeriod((e.target as HTMLSelectElement).value))}>
            ${PERIODS.map((o) => html`<option key=${o} value=${o}>${o}</option>`)}
          </select></div>
        <label><input type="checkbox" checked=${previous} disabled=${period === 'all'} onChange=${() => restart(() => setPrevious(!previous))} /> The period before</label>
        <div><label for="board-order">Order</label>
          <select id="board-order" value=${order} onChange=${(e: Event) => restart(() => setOrder((e.target as HTMLSelectElement).value))}>
            <option value="desc">highest first</option><option value="asc">lowest first</option>
          </select></div>
      </div>
      <${ErrorNote} error=${page.error} />
      ${p ? html`<p class="meta">${p.period === 'all' ? 'All-time' : `${p.period} ${p.periodId}`}</p>` : null}
      ${p && p.entries.length === 0 ? html`<p>No entries.</p>` : null}
      ${p && p.entries.length > 0
        ? html`<div class="table-wrap"><table>
            <caption class="visually-hidden">Entries of ${board}</caption>
            <thead><tr><th scope="col">Rank</th><th scope="col">User id</th><th scope="col">Score</th><th scope="col">Actions</th></tr></thead>
            <tbody>${p.entries.map(
              (e) => html`<tr key=${e.userId}>
                <td>${e.rank}</td>
                <td><${Link} href=${paths.player(workspaceId, e.userId)} class="mono">${e.userId}</${Link}></td>
                <td>${e.score.toLocaleString('en', { maximumFractionDigits: 20 })}</td>
                <td><button type="button" class="destructive" disabled=${action.busy} aria-label=${`Remove ${e.userId} from ${board}`}
                  onClick=${() => {
                    if (!confirm(`Remove player ${e.userId} from every period of ${board}?`)) return;
                    void action.run(async () => {
                      await adminData('DELETE', `${base}/entries/${enc(e.userId)}`);
                      reload(`Removed player ${e.userId}.`);
                    });
                  }}>Remove</button></td>
              </tr>`,
            )}</tbody></table></div>`
        : null}
      <nav class="pager" aria-label="Entries pages">
        <button type="button" disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
        <span>Page ${cursors.length}</span>
        <button type="button" disabled=${!p?.next} onClick=${() => p?.next && setCursors([...cursors, p.next])}>Next page</button>
      </nav>
      <${ErrorNote} error=${action.error} />
    </section>
    ${s ? html`<section aria-labelledby="periods-h"><h2 id="periods-h">Periods</h2>
        <${Periods} key=${s.periods.join()} workspaceId=${workspaceId} board=${board} kept=${s.periods} onChanged=${reload} /></section>` : null}
    <section aria-labelledby="reset-h">
      <h2 id="reset-h">Reset the board</h2>
      <p>Removes every entry of every period; the periods and the followed key stay. This cannot be undone.</p>
      <${TypedConfirm} id="reset-board" word=${board} what="reset this board" button="Reset board" busy=${action.busy}
        onConfirm=${() => void action.run(async () => {
          const done = await adminData<{ removed: number }>('POST', `${base}/reset`);
          setCursors([undefined]);
          reload(`Reset: ${done.removed} entries removed.`);
        })} />
    </section>`;
}
