// A player's waiting messages (docs/safe-saves.md, "Messages to players"): the Messages page of a
// workspace (/console/workspaces/<id>/messages[/<userId>]: type a user id, see what waits for
// that player) and the "Messages waiting" panel of the player page are the same component: the
// messages oldest first, each as a tree, send one from the JSON editor (invalid JSON is never
// sent), delete one or all after a confirmation. Listing is audited as a read of the player
// (player.messages.view), as the admin API does for every caller.
import { useState } from 'preact/hooks';
import { adminData, ApiError, enc } from '../api.js';
import { navigate, paths } from '../router.js';
import { ErrorNote, html, JsonEditor, JsonTree, Link, Notice, time, useAction, useLoad } from '../ui.js';
import { WorkspaceHeader } from './workspace-nav.js';
import type { Workspace } from './workspaces.js';

interface Message {
  id: string;
  message: unknown;
  sentAt: string;
  expiresAt: string;
}

/** The service's refusals of a send, in the console's words: what happened, and what to do. */
function sendProblem(userId: string) {
  return (err: unknown): string | undefined => {
    if (!(err instanceof ApiError)) return undefined;
    if (err.code === 'INBOX_FULL') {
      return `Not sent: player ${userId} already has as many messages waiting as a player may hold (MESSAGES_MAX_WAITING). Delete some, or wait until a game server processes them. (${err.code} ${err.status})`;
    }
    if (err.code === 'PAYLOAD_TOO_LARGE') {
      return `Not sent: the message is too large. ${err.message}. Make it smaller, or send its parts as separate messages. (${err.code} ${err.status})`;
    }
    return undefined;
  };
}

function MessageCard(props: { message: Message; userId: string; base: string; onDeleted: (note: string) => void }) {
  const m = props.message;
  const action = useAction();
  return html`<li class="entry" aria-labelledby=${`${m.id}-h`}>
    <h3 id=${`${m.id}-h`} class="mono">${m.id}</h3>
    <p class="meta">Sent ${time(m.sentAt)}; expires ${time(m.expiresAt)} unless a game server processes it first.</p>
    <${JsonTree} value=${m.message} label=${`Message ${m.id}`} name="message" />
    <div class="row">
      <button type="button" class="destructive" aria-label=${`Delete message ${m.id}`} disabled=${action.busy} onClick=${() => {
        if (!confirm(`Delete message ${m.id} of player ${props.userId}? No game server will get it.`)) return;
        void action.run(async () => {
          const done = await adminData<{ deleted: number }>('DELETE', `${props.base}?id=${enc(m.id)}`);
          props.onDeleted(done.deleted ? `Deleted message ${m.id}.` : `Message ${m.id} was no longer waiting: a game server processed it, or it expired.`);
        });
      }}>Delete</button>
    </div>
    <${ErrorNote} error=${action.error} />
  </li>`;
}

function SendMessage(props: { userId: string; base: string; onSent: (note: string) => void }) {
  const [days, setDays] = useState('');
  // A new editor after each send, so the next message starts empty.
  const [sent, setSent] = useState(0);
  const action = useAction();
  const daysOk = days.trim() === '' || /^[1-9]\d{0,2}$/.test(days.trim());
  return html`<div aria-labelledby="msg-send-h" role="group">
    <h3 id="msg-send-h">Send a message</h3>
    <p class="hint">The game server that holds the player (or the next one to) gets it with the player's data, applies it, and acknowledges it with its save: a gift, a refund, a note from support.</p>
    <label for="msg-days">Waits for (days; empty: the service's default, MESSAGE_TTL_SECONDS)</label>
    <input id="msg-days" inputmode="numeric" autocomplete="off" value=${days} aria-invalid=${daysOk ? 'false' : 'true'} aria-describedby="msg-days-problem"
      onInput=${(e: Event) => setDays((e.target as HTMLInputElement).value)} />
    <p id="msg-days-problem" class=${daysOk ? 'hint' : 'error'} aria-live="polite">${daysOk ? '' : 'Days must be a whole number from 1.'}</p>
    <${JsonEditor} key=${sent} id="msg-new" label="Message (JSON)" initial="" busy=${action.busy || !daysOk} submitLabel="Send message"
      onSubmit=${(message: unknown) => void action.run(async () => {
        const body = days.trim() === '' ? { message } : { message, ttlSeconds: Number(days.trim()) * 86_400 };
        const done = await adminData<{ messageId: string; expiresAt: string }>('POST', props.base, body);
        setSent((n) => n + 1);
        props.onSent(`Sent ${done.messageId} to player ${props.userId}; it waits until ${time(done.expiresAt)}.`);
      })} />
    <${ErrorNote} error=${action.error} words=${sendProblem(props.userId)} />
  </div>`;
}

/**
 * The messages waiting for one player, with send and delete. `title` is the section's heading;
 * `onPlayerPage` links to the Messages page instead of to the player.
 */
export function PlayerMessages(props: { workspaceId: string; userId: string; title: string; onPlayerPage?: boolean }) {
  const { workspaceId, userId } = props;
  const base = `/workspaces/${enc(workspaceId)}/players/${enc(userId)}/messages`;
  const list = useLoad(() => adminData<{ messages: Message[] }>('GET', base), [base]);
  const [note, setNote] = useState<string | undefined>();
  const all = useAction();
  const changed = (text: string) => {
    setNote(text);
    list.reload();
  };
  const messages = list.data?.messages ?? [];
  return html`<section aria-labelledby="msgs-h">
    <h2 id="msgs-h">${props.title}</h2>
    <p>${props.onPlayerPage
      ? html`<${Link} href=${paths.messages(workspaceId, userId)}>Open on the Messages page</${Link}>`
      : html`<${Link} href=${paths.player(workspaceId, userId)}>Open player ${userId}</${Link}>`}</p>
    <${Notice} text=${note} />
    <${ErrorNote} error=${list.error} />
    ${list.data
      ? html`<p class="meta" data-testid="messages-count">${messages.length === 0
          ? `No messages waiting for player ${userId}.`
          : `${messages.length} ${messages.length === 1 ? 'message' : 'messages'} waiting for player ${userId}, oldest first.`}</p>`
      : list.loading
        ? html`<p role="status">Loading…</p>`
        : null}
    <div class="row">
      <button type="button" class="secondary" disabled=${list.loading} onClick=${() => list.reload()}>Reload messages</button>
      ${messages.length > 0
        ? html`<button type="button" class="destructive" disabled=${all.busy} onClick=${() => {
            const what = messages.length === 1 ? 'the only message' : `all ${messages.length} messages`;
            if (!confirm(`Delete ${what} waiting for player ${userId}? No game server will get ${messages.length === 1 ? 'it' : 'them'}.`)) return;
            void all.run(async () => {
              const done = await adminData<{ deleted: number }>('DELETE', base);
              changed(`Deleted ${done.deleted} ${done.deleted === 1 ? 'message' : 'messages'}.`);
            });
          }}>${messages.length === 1 ? 'Delete the only message' : `Delete all ${messages.length} messages`}</button>`
        : null}
    </div>
    <${ErrorNote} error=${all.error} />
    ${messages.length > 0
      ? html`<ol class="card-list" aria-label=${`Messages waiting for ${userId}`}>
          ${messages.map((m) => html`<${MessageCard} key=${m.id} message=${m} userId=${userId} base=${base} onDeleted=${changed} />`)}
        </ol>`
      : null}
    <${SendMessage} userId=${userId} base=${base} onSent=${changed} />
  </section>`;
}

export function MessagesPage(props: { workspaceId: string; userId?: string }) {
  const id = props.workspaceId;
  const workspace = useLoad(() => adminData<Workspace>('GET', `/workspaces/${enc(id)}`), [id]);
  const [text, setText] = useState(props.userId ?? '');
  return html`<${WorkspaceHeader} workspaceId=${id} current="messages" title="Messages" name=${workspace.data?.name} />
    <p class="hint">Messages wait for a player until the game server holding the player processes them, or until they expire.</p>
    <form class="inline-form" role="search" aria-label="Find a player's messages" onSubmit=${(e: Event) => {
      e.preventDefault();
      if (text.trim()) navigate(paths.messages(id, text.trim()));
    }}>
      <div><label for="messages-user">User id</label><input id="messages-user" required maxlength="64" autocomplete="off" value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>
      <div><button type="submit">Show messages</button></div>
    </form>
    <${ErrorNote} error=${workspace.error} />
    ${props.userId
      ? html`<${PlayerMessages} key=${props.userId} workspaceId=${id} userId=${props.userId} title=${`Messages waiting for player ${props.userId}`} />`
      : html`<p>Type a user id to see the messages waiting for that player, and to send one.</p>`}`;
}
