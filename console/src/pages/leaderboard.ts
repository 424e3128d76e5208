// /console/workspaces/<id>/leaderboards/<board>: one board a page at a time from its top
// (period, order, the cursor's next page), a player's rank looked up by user id with the entries
// around it, a player removed from it (confirmed), reset (typing its name), and the periods every
// write goes to.
import { useState } from 'preact/hooks';
import { adminData, ApiError, enc } from '../api.js';
import { paths } from '../router.js';
import { ErrorNote, html, Link, Notice, TypedConfirm, useAction, useLoad } from '../ui.js';
import { entriesText, type BoardSummary } from './leaderboards.js';
import { WorkspaceHeader } from './workspace-nav.js';

interface Entry {
  rank: number;
  userId: string;
  score: number;
}

interface BoardPage {
  board: string;
  period: string;
  periodId: string;
  entries: Entry[];
  next: string | null;
}

interface BoardRank {
  board: string;
  period: string;
  periodId: string;
  userId: string;
  rank: number;
  score: number;
  entries: Entry[];
}

interface View {
  period: string;
  previous: boolean;
  order: string;
}

const PERIODS = ['all', 'daily', 'weekly', 'monthly'];
const PAGE = 20;
/** Entries shown above and below a player looked up. */
const AROUND = 2;
const score = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 20 });

/** The period chosen, for people: all-time, this week, last month. */
function periodWords(view: View): string {
  if (view.period === 'all') return 'all-time';
  const unit = { daily: 'day', weekly: 'week', monthly: 'month' }[view.period] ?? view.period;
  if (unit === 'day') return view.previous ? 'yesterday (UTC)' : 'today (UTC)';
  return `${view.previous ? 'last' : 'this'} ${unit} (UTC)`;
}

/** Takes a player off every period of the board, after the operator confirms. */
async function removeEntry(base: string, board: string, userId: string): Promise<boolean> {
  if (!confirm(`Remove player ${userId} from every period of ${board}?`)) return false;
  await adminData('DELETE', `${base}/entries/${enc(userId)}`);
  return true;
}

/** A player's rank in the period and order chosen, with the entries around it; remove from there. */
function FindRank(props: { workspaceId: string; board: string; base: string; view: View; generation: number; onRemoved: (note: string) => void }) {
  const { workspaceId, board, base, view } = props;
  const [text, setText] = useState('');
  const [userId, setUserId] = useState<string | undefined>();
  const found = useLoad(async () => {
    if (userId === undefined) return undefined;
    const query = new URLSearchParams({ period: view.period, order: view.order, around: String(AROUND), ...(view.previous ? { previous: 'true' } : {}) });
    return adminData<BoardRank>('GET', `${base}/entries/${enc(userId)}?${query}`);
  }, [base, userId, view.period, view.previous, view.order, props.generation]);
  const action = useAction();
  const words = (err: unknown) => {
    if (!(err instanceof ApiError)) return undefined;
    if (err.code === 'PLAYER_NOT_FOUND') return `Player ${userId} has no entry on ${board} ${periodWords(view)}. (${err.code} ${err.status})`;
    if (err.code === 'PERIOD_NOT_KEPT') return `${board} keeps no ${view.period} entries: choose another period above. (${err.code} ${err.status})`;
    return undefined;
  };
  const r = found.data;
  return html`<section aria-labelledby="rank-h">
    <h2 id="rank-h">Find a player's rank</h2>
    <p class="hint">In the period and order chosen above: ${periodWords(view)}, ${view.order === 'desc' ? 'highest' : 'lowest'} first.</p>
    <form class="inline-form" role="search" aria-label=${`Find a player on ${board}`} onSubmit=${(e: Event) => {
      e.preventDefault();
      action.setError(undefined);
      if (text.trim()) setUserId(text.trim());
    }}>
      <div><label for="rank-user">User id</label><input id="rank-user" required maxlength="64" autocomplete="off" value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>
      <div><button type="submit">Find rank</button></div>
    </form>
    <${ErrorNote} error=${found.error} words=${words} />
    ${found.loading && userId !== undefined ? html`<p role="status">Looking up…</p>` : null}
    ${r && !found.loading
      ? html`<div class="entry" role="region" aria-label=${`Rank of ${r.userId}`}>
          <p data-testid="rank-result">Player <${Link} href=${paths.player(workspaceId, r.userId)} class="mono">${r.userId}</${Link}> is number <strong>${r.rank}</strong> on ${board} ${periodWords(view)}, with ${score(r.score)}.</p>
          <div class="table-wrap"><table class="cards compact">
            <caption>Entries around ${r.userId}</caption>
            <thead><tr><th scope="col">Rank</th><th scope="col">User id</th><th scope="col">Score</th></tr></thead>
            <tbody>${r.entries.map(
              (e) => html`<tr key=${e.userId} class=${e.userId === r.userId ? 'self' : undefined}>
                <td data-label="Rank">${e.rank}</td>
                <td data-label="User id" class="mono">${e.userId === r.userId ? html`<strong>${e.userId}</strong>` : e.userId}</td>
                <td data-label="Score">${score(e.score)}</td>
              </tr>`,
            )}</tbody></table></div>
          <button type="button" class="destructive" disabled=${action.busy} onClick=${() => void action.run(async () => {
            if (!(await removeEntry(base, board, r.userId))) return;
            setUserId(undefined);
            props.onRemoved(`Removed player ${r.userId}.`);
          })}>Remove ${r.userId} from every period</button>
          <${ErrorNote} error=${action.error} />
        </div>`
      : null}
  </section>`;
}

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
  const [generation, setGeneration] = useState(0);
  const after = cursors[cursors.length - 1];
  const summary = useLoad(
    async () => (await adminData<BoardSummary[]>('GET', `/workspaces/${enc(workspaceId)}/leaderboards`)).find((b) => b.board === board),
    [workspaceId, board],
  );
  // Each answer keeps the page number and order it was asked with: until the next page has
  // arrived the entries shown are the last page's, and the status line describes those.
  const number = cursors.length;
  const page = useLoad(async () => {
    const query = new URLSearchParams({ period, order, limit: String(PAGE), ...(previous ? { previous: 'true' } : {}), ...(after ? { after } : {}) });
    return { number, order, ...(await adminData<BoardPage>('GET', `${base}?${query}`)) };
  }, [base, period, previous, order, after]);
  const [note, setNote] = useState<string | undefined>();
  const action = useAction();
  const resetAction = useAction();
  const restart = (set: () => void) => {
    set();
    setCursors([undefined]);
  };
  const reload = (text: string) => {
    setNote(text);
    summary.reload();
    page.reload();
    setGeneration((g) => g + 1);
  };
  const s = summary.data;
  const p = page.data;
  // The entries shown are not yet those asked for: the pager waits for them.
  const stale = page.loading || p?.number !== number || p.order !== order;
  return html`<${WorkspaceHeader} workspaceId=${workspaceId} current="leaderboards" title=${`Leaderboard ${board}`}
      parent=${{ href: paths.leaderboards(workspaceId), label: 'Leaderboards' }} />
    ${s ? html`<p class="meta">Keeps ${s.periods.join(', ')}${s.follow ? `; follows the key ${s.follow.key}` : ''}; ${entriesText(s)} entries now.</p>` : null}
    ${summary.data === undefined && !summary.loading && !summary.error ? html`<p class="error">No board ${board} in this workspace.</p>` : null}
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
      ${p ? html`<p class="meta" role="status">${p.period === 'all' ? 'All-time' : `${p.period} ${p.periodId}`}, ${p.order === 'desc' ? 'highest' : 'lowest'} first; page ${p.number}${p.number === 1 ? ' (the top)' : ''}.</p>` : null}
      ${p && p.entries.length === 0 ? html`<p>No entries.</p>` : null}
      ${p && p.entries.length > 0
        ? html`<div class="table-wrap"><table class="cards compact">
            <caption class="visually-hidden">Entries of ${board}</caption>
            <thead><tr><th scope="col">Rank</th><th scope="col">User id</th><th scope="col">Score</th><th scope="col">Actions</th></tr></thead>
            <tbody>${p.entries.map(
              (e) => html`<tr key=${e.userId}>
                <td data-label="Rank">${e.rank}</td>
                <td data-label="User id"><${Link} href=${paths.player(workspaceId, e.userId)} class="mono">${e.userId}</${Link}></td>
                <td data-label="Score">${score(e.score)}</td>
                <td><button type="button" class="destructive" disabled=${action.busy} aria-label=${`Remove ${e.userId} from ${board}`}
                  onClick=${() => void action.run(async () => {
                    if (await removeEntry(base, board, e.userId)) reload(`Removed player ${e.userId}.`);
                  })}>Remove</button></td>
              </tr>`,
            )}</tbody></table></div>`
        : null}
      <${ErrorNote} error=${action.error} />
      <nav class="pager" aria-label="Entries pages">
        <button type="button" disabled=${stale || number <= 1} onClick=${() => setCursors([undefined])}>Top page</button>
        <button type="button" disabled=${stale || number <= 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
        <button type="button" disabled=${stale || !p?.next} onClick=${() => p?.next && setCursors([...cursors, p.next])}>Next page</button>
      </nav>
    </section>
    <${FindRank} workspaceId=${workspaceId} board=${board} base=${base} view=${{ period, previous, order }} generation=${generation} onRemoved=${reload} />
    ${s ? html`<section aria-labelledby="periods-h"><h2 id="periods-h">Periods</h2>
        <${Periods} key=${s.periods.join()} workspaceId=${workspaceId} board=${board} kept=${s.periods} onChanged=${reload} /></section>` : null}
    <section aria-labelledby="reset-h">
      <h2 id="reset-h">Reset the board</h2>
      <p>Removes every entry of every period; the periods and the followed key stay. This cannot be undone.</p>
      <${TypedConfirm} id="reset-board" word=${board} what="reset this board" button="Reset board" busy=${resetAction.busy}
        onConfirm=${() => void resetAction.run(async () => {
          const done = await adminData<{ removed: number }>('POST', `${base}/reset`);
          setCursors([undefined]);
          reload(`Reset: ${done.removed} entries removed.`);
        })} />
      <${ErrorNote} error=${resetAction.error} />
    </section>`;
}
