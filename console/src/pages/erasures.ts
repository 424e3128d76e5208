// /console/erasures: the right to erasure for operators: the counts, erase a player (one
// workspace or every one, confirmed by typing the user id) and follow the job to done, the
// newest jobs by state (failed ones with their error, unmapped ones with the games no workspace
// serves, and Dismiss for those), and a user's jobs found by the user id (docs/erasure.md).
import { useEffect, useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { ErrorNote, html, Notice, time, TypedConfirm, useAction, useLoad } from '../ui.js';
import type { Workspace } from './workspaces.js';

interface Progress {
  phase: string;
  workspacesTotal: number;
  workspacesDone: number;
  keysDeleted: number;
}

export interface ErasureJob {
  jobId: string;
  state: 'pending' | 'failed' | 'unmapped' | 'done';
  source: string;
  requestedBy: string;
  requestedAt: string;
  user: string;
  scope: { workspaceId: string } | { allWorkspaces: true } | { gameIds: string[] };
  notificationId: string | null;
  workspaces: string[];
  unmappedGames: string[];
  progress: Progress;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  doneAt: string | null;
}

export interface ErasureCounts {
  requested: number;
  done: number;
  pending: number;
  failed: number;
  unmapped: number;
}

const POLL_MS = 1000;

export function scopeText(scope: ErasureJob['scope']): string {
  if ('workspaceId' in scope) return `workspace ${scope.workspaceId}`;
  if ('allWorkspaces' in scope) return 'every workspace';
  return `games ${scope.gameIds.join(', ')}`;
}

export function progressText(job: ErasureJob): string {
  const p = job.progress;
  return `${p.phase}: ${p.workspacesDone} of ${p.workspacesTotal} workspaces, ${p.keysDeleted} keys deleted`;
}

/** One job followed until it is no longer pending: the state, a progress bar, and what is left to do. */
function JobProgress(props: { jobId: string; onSettled: () => void }) {
  const [job, setJob] = useState<ErasureJob | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = () => {
      adminData<ErasureJob>('GET', `/erasures/${enc(props.jobId)}`).then(
        (j) => {
          if (stop) return;
          setJob(j);
          if (j.state === 'pending') timer = setTimeout(tick, POLL_MS);
          else props.onSettled();
        },
        (err: unknown) => !stop && setError(err),
      );
    };
    tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [props.jobId]);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!job) return html`<p role="status">Recording…</p>`;
  const p = job.progress;
  return html`<div class="entry" role="region" aria-label=${`Erasure ${job.jobId}`}>
    <h3>Erasure <span class="mono">${job.jobId}</span>: <span data-testid="job-state">${job.state}</span></h3>
    <p><label for="job-progress">Progress</label>
      <progress id="job-progress" max=${Math.max(1, p.workspacesTotal)} value=${p.workspacesDone}></progress>
      <span role="status">${progressText(job)}</span></p>
    ${job.lastError ? html`<p class="error">Last attempt failed: ${job.lastError}; retried at ${time(job.nextAttemptAt)}.</p>` : null}
    ${job.state === 'done' ? html`<p class="notice">Done at ${time(job.doneAt)}, in ${job.workspaces.join(', ') || 'no workspace'}.</p>` : null}
  </div>`;
}

function EraseForm(props: { onRecorded: () => void }) {
  const workspaces = useLoad(() => adminData<Workspace[]>('GET', '/workspaces'), []);
  const [userId, setUserId] = useState('');
  const [scope, setScope] = useState<'one' | 'all'>('one');
  const [workspaceId, setWorkspaceId] = useState('');
  const [jobId, setJobId] = useState<string | undefined>();
  const action = useAction();
  const chosen = workspaceId || workspaces.data?.[0]?.id || '';
  const ready = userId.trim() !== '' && (scope === 'all' || chosen !== '');
  return html`<section aria-labelledby="erase-h">
    <h2 id="erase-h">Erase a player</h2>
    <p>Deletes the player's data, history, session, kept answers and anything else kept under the player, and keeps a tombstone so that imports of older backups skip the player. This cannot be undone.</p>
    <div class="inline-form">
      <div><label for="erase-user">User id</label><input id="erase-user" value=${userId} autocomplete="off" onInput=${(e: Event) => setUserId((e.target as HTMLInputElement).value)} /></div>
      <div><label for="erase-scope">Where</label>
        <select id="erase-scope" value=${scope} onChange=${(e: Event) => setScope((e.target as HTMLSelectElement).value as 'one' | 'all')}>
          <option value="one">one workspace</option><option value="all">every workspace</option>
        </select></div>
      ${scope === 'one'
        ? html`<div><label for="erase-ws">Workspace</label>
            <select id="erase-ws" value=${chosen} onChange=${(e: Event) => setWorkspaceId((e.target as HTMLSelectElement).value)}>
              ${(workspaces.data ?? []).map((w) => html`<option value=${w.id}>${w.name} (${w.id})</option>`)}
            </select></div>`
        : null}
    </div>
    ${ready
      ? html`<${TypedConfirm} id="erase-confirm" word=${userId.trim()} what=${`erase player ${userId.trim()} ${scope === 'all' ? 'in every workspace' : `in ${chosen}`}`}
          button="Erase player" busy=${action.busy}
          onConfirm=${() => void action.run(async () => {
            const body = scope === 'all' ? { userId: userId.trim(), allWorkspaces: true } : { userId: userId.trim(), workspaceId: chosen };
            const job = await adminData<ErasureJob>('POST', '/erasures', body);
            setJobId(job.jobId);
            setUserId('');
            props.onRecorded();
          })} />`
      : null}
    <${ErrorNote} error=${workspaces.error ?? action.error} />
    ${jobId ? html`<${JobProgress} key=${jobId} jobId=${jobId} onSettled=${props.onRecorded} />` : null}
  </section>`;
}

function Jobs(props: { generation: number; onChanged: () => void }) {
  const [state, setState] = useState('');
  const [user, setUser] = useState('');
  const [applied, setApplied] = useState({ state: '', user: '' });
  const list = useLoad(
    () => adminData<{ counts: ErasureCounts; jobs: ErasureJob[] }>('GET', `/erasures?limit=50${applied.state ? `&state=${enc(applied.state)}` : ''}${applied.user ? `&user=${enc(applied.user)}` : ''}`),
    [applied, props.generation],
  );
  const action = useAction();
  const [note, setNote] = useState<string | undefined>();
  const c = list.data?.counts;
  return html`<section aria-labelledby="jobs-h">
    <h2 id="jobs-h">Jobs</h2>
    ${c
      ? html`<p data-testid="erasure-counts">${c.requested} requested, ${c.done} done; now ${c.pending} pending, ${c.failed} failed, ${c.unmapped} waiting for a game's workspace.</p>`
      : null}
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      setApplied({ state, user: user.trim() });
    }}>
      <div><label for="jobs-state">State</label>
        <select id="jobs-state" value=${state} onChange=${(e: Event) => setState((e.target as HTMLSelectElement).value)}>
          <option value="">any</option><option value="pending">pending</option><option value="failed">failed</option><option value="unmapped">unmapped</option><option value="done">done</option>
        </select></div>
      <div><label for="jobs-user">User id (empty: every user)</label><input id="jobs-user" value=${user} autocomplete="off" onInput=${(e: Event) => setUser((e.target as HTMLInputElement).value)} /></div>
      <button type="submit">Show jobs</button>
    </form>
    <${Notice} text=${note} />
    <${ErrorNote} error=${list.error ?? action.error} />
    <div class="table-wrap"><table class="cards">
      <caption class="visually-hidden">Erasure jobs, newest first</caption>
      <thead><tr><th scope="col">Job</th><th scope="col">State</th><th scope="col">Requested</th><th scope="col">Scope</th><th scope="col">Progress</th><th scope="col">Needs</th></tr></thead>
      <tbody>${(list.data?.jobs ?? []).map(
        (j) => html`<tr key=${j.jobId}>
          <td data-label="Job" class="mono">${j.jobId}<div class="meta">user ${j.user.slice(0, 12)}…</div></td>
          <td data-label="State">${j.state}</td>
          <td data-label="Requested">${time(j.requestedAt)}<div class="meta">${j.requestedBy}</div></td>
          <td data-label="Scope">${scopeText(j.scope)}</td>
          <td data-label="Progress">${progressText(j)}</td>
          <td data-label="Needs">${j.state === 'unmapped'
            ? html`Games no workspace serves: <span class="mono">${j.unmappedGames.join(', ')}</span>. Map them on a workspace's page, or
                <button type="button" class="secondary" aria-label=${`Dismiss ${j.jobId}`} disabled=${action.busy} onClick=${() => {
                  if (!confirm(`Dismiss ${j.jobId}? Workspaces mapped to its games later will not be erased.`)) return;
                  void action.run(async () => {
                    await adminData('POST', `/erasures/${enc(j.jobId)}/dismiss`);
                    setNote(`Dismissed ${j.jobId}.`);
                    props.onChanged();
                  });
                }}>Dismiss</button>`
            : j.lastError
              ? html`<span class="error">${j.lastError}</span><div class="meta">retried at ${time(j.nextAttemptAt)}</div>`
              : '—'}</td></tr>`,
      )}</tbody></table></div>
    ${list.loading ? html`<p role="status">Loading…</p>` : null}
    ${!list.loading && list.data?.jobs.length === 0 ? html`<p>No erasure jobs${applied.state || applied.user ? ' match' : ''}.</p>` : null}
  </section>`;
}

export function ErasuresPage() {
  const [generation, setGeneration] = useState(0);
  const bump = () => setGeneration((g) => g + 1);
  return html`<h1>Erasures</h1>
    <p class="hint">Right-to-erasure requests from the platform's webhook and from operators (docs/erasure.md).</p>
    <${EraseForm} onRecorded=${bump} />
    <${Jobs} generation=${generation} onChanged=${bump} />`;
}
