// The workspace page's games: the platform's game (universe) ids the workspace serves, which the
// webhook's erasure requests name. Saving a list re-runs the requests that waited for one of
// its games (docs/erasure.md). Beside them, the erasure player names: templates of the players
// an erasure of a user id also erases in the workspace (`Player_{userId}`).
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

interface WorkspaceErasurePlayers {
  workspaceId: string;
  templates: string[];
}

export function ErasurePlayersSection(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const names = useLoad(() => adminData<WorkspaceErasurePlayers>('GET', `/workspaces/${enc(id)}/erasure-players`), [id]);
  const [text, setText] = useState<string | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const action = useAction();
  const shown = text ?? (names.data?.templates ?? []).join(' ');
  return html`<section aria-labelledby="erasure-players-h">
    <h2 id="erasure-players-h">Players named after the user id</h2>
    <p>An erasure of a user id erases the player of that id and, in this workspace, the players these templates name: <code>Player_{userId}</code> is user 42's <code>Player_42</code>, as a ProfileStore game names its profiles.</p>
    <${Notice} text=${note} />
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      const templates = shown.split(/[\s,]+/).filter(Boolean);
      void action.run(async () => {
        const saved = await adminData<WorkspaceErasurePlayers>('PUT', `/workspaces/${enc(id)}/erasure-players`, { templates });
        setText(undefined);
        setNote(saved.templates.length === 0 ? 'Erasures erase the player of the user id only.' : `Erasures also erase ${saved.templates.join(', ')}.`);
        names.reload();
      });
    }}>
      <div><label for="erasure-players">Templates with {userId} (spaces between)</label>
        <input id="erasure-players" size="40" value=${shown} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>
      <button type="submit" disabled=${action.busy || names.loading}>Save names</button>
    </form>
    <${ErrorNote} error=${names.error ?? action.error} />
  </section>`;
}
