// The workspace page's games: the platform's game (universe) ids the workspace serves, which the
// webhook's erasure requests name. Saving a list re-runs the requests that waited for one of
// its games (docs/erasure.md).
import { useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { ErrorNote, html, Notice, useAction, useLoad } from '../ui.js';

interface WorkspaceGames {
  workspaceId: string;
  gameIds: string[];
  requeued: string[];
}

export function GamesSection(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const games = useLoad(() => adminData<WorkspaceGames>('GET', `/workspaces/${enc(id)}/games`), [id]);
  const [text, setText] = useState<string | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const action = useAction();
  const shown = text ?? (games.data?.gameIds ?? []).join(' ');
  return html`<section aria-labelledby="games-h">
    <h2 id="games-h">Games</h2>
    <p>The platform's game ids this workspace serves: an erasure request from the platform's webhook erases the player in the workspaces serving its games.</p>
    <${Notice} text=${note} />
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      const gameIds = shown.split(/[\s,]+/).filter(Boolean);
      void action.run(async () => {
        const saved = await adminData<WorkspaceGames>('PUT', `/workspaces/${enc(id)}/games`, { gameIds });
        setText(undefined);
        setNote(
          `Serves ${saved.gameIds.length === 0 ? 'no game' : `games ${saved.gameIds.join(', ')}`}.` +
            (saved.requeued.length > 0 ? ` ${saved.requeued.length} erasure request(s) that waited for these games run again.` : ''),
        );
        games.reload();
      });
    }}>
      <div><label for="game-ids">Game ids (spaces or commas between)</label>
        <input id="game-ids" size="40" value=${shown} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>
      <button type="submit" disabled=${action.busy || games.loading}>Save games</button>
    </form>
    <${ErrorNote} error=${games.error ?? action.error} />
  </section>`;
}
