// A workspace's API keys: create (scope, label, expiry), revoke, rotate with a grace period,
// mark as a development key. A new key is shown once.
import { useState } from 'preact/hooks';
import { adminData, enc } from '../api.js';
import { ErrorNote, html, Notice, Pager, ShownOnce, time, useAction, usePages } from '../ui.js';

export interface KeyView {
  keyId: string;
  prefix: string;
  label: string | null;
  scope: 'read' | 'write';
  status: 'active' | 'revoked' | 'expired';
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  dev?: boolean;
}

function CreateKey(props: { workspaceId: string; onCreated: (apiKey: string) => void }) {
  const [scope, setScope] = useState('write');
  const [label, setLabel] = useState('');
  const [expiresIn, setExpiresIn] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { scope, ...(label.trim() ? { label: label.trim() } : {}), ...(expiresIn.trim() ? { expiresIn: expiresIn.trim() } : {}) };
      const made = await adminData<{ apiKey: string }>('POST', `/workspaces/${enc(props.workspaceId)}/keys`, body);
      setLabel('');
      setExpiresIn('');
      props.onCreated(made.apiKey);
    });
  };
  return html`<form class="inline-form" onSubmit=${submit} aria-label="Create a key">
    <div><label for="key-scope">Scope</label>
      <select id="key-scope" value=${scope} onChange=${(e: Event) => setScope((e.target as HTMLSelectElement).value)}>
        <option value="write">write</option><option value="read">read</option>
      </select></div>
    <div><label for="key-label">Label</label><input id="key-label" maxlength="100" value=${label} onInput=${(e: Event) => setLabel((e.target as HTMLInputElement).value)} /></div>
    <div><label for="key-expiry">Expires in (e.g. 30d, 12h; empty: never)</label><input id="key-expiry" value=${expiresIn} onInput=${(e: Event) => setExpiresIn((e.target as HTMLInputElement).value)} /></div>
    <div><button type="submit" disabled=${action.busy}>Create key</button></div>
    <${ErrorNote} error=${action.error} />
  </form>`;
}

function KeyRow(props: { view: KeyView; onChanged: (note: string, apiKey?: string) => void }) {
  const k = props.view;
  const [grace, setGrace] = useState('1h');
  const action = useAction();
  const act = (fn: () => Promise<void>) => void action.run(fn).then(() => undefined);
  const name = k.label ? `${k.label} (${k.prefix}…)` : `${k.prefix}…`;
  return html`<tr>
    <td data-label="Key"><span class="mono">${k.prefix}…</span><div class="meta mono">${k.keyId}</div></td>
    <td data-label="Label">${k.label ?? '—'}</td><td data-label="Scope">${k.scope}</td>
    <td data-label="Status"><span class=${`badge ${k.status === 'active' ? 'ok' : 'danger'}`}>${k.status}</span>${k.dev ? html`<span class="visually-hidden">, </span> <span class="badge accent">development</span>` : ''}</td>
    <td data-label="Created">${time(k.createdAt)}</td><td data-label="Expires">${time(k.expiresAt)}</td><td data-label="Last used">${time(k.lastUsedAt)}</td>
    <td data-label="Actions">${k.status === 'active'
      ? html`<div class="row">
          <button type="button" class="destructive" disabled=${action.busy} aria-label=${`Revoke key ${name}`}
            onClick=${() => {
              if (!confirm(`Revoke key ${name}? Requests with it are refused at once.`)) return;
              act(async () => {
                await adminData('POST', `/keys/${enc(k.keyId)}/revoke`);
                props.onChanged(`Revoked key ${name}.`);
              });
            }}>Revoke</button>
          <label for=${`grace-${k.keyId}`} class="visually-hidden">Grace period for rotating ${name}</label>
          <input id=${`grace-${k.keyId}`} size="4" value=${grace} onInput=${(e: Event) => setGrace((e.target as HTMLInputElement).value)} />
          <button type="button" disabled=${action.busy} aria-label=${`Rotate key ${name} with the grace period`}
            onClick=${() => act(async () => {
              const rotated = await adminData<{ key: { apiKey: string } }>('POST', `/keys/${enc(k.keyId)}/rotate`, grace.trim() ? { grace: grace.trim() } : {});
              props.onChanged(`Rotated key ${name}: the old key works for ${grace.trim() || '0'} more.`, rotated.key.apiKey);
            })}>Rotate</button>
          <button type="button" class="secondary" disabled=${action.busy} aria-label=${`${k.dev ? 'Mark as production' : 'Mark as development'}: key ${name}`}
            onClick=${() => act(async () => {
              await adminData('POST', `/keys/${enc(k.keyId)}/dev`, { dev: !k.dev });
              props.onChanged(`${name} is ${k.dev ? 'a production' : 'a development'} key now.`);
            })}>${k.dev ? 'Mark as production' : 'Mark as development'}</button>
        </div>
        <${ErrorNote} error=${action.error} />`
      : null}</td>
  </tr>`;
}

export function KeysSection(props: { workspaceId: string; keys: KeyView[]; reload: () => void }) {
  const [secret, setSecret] = useState<string | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const pages = usePages(props.keys, 20);
  const changed = (text: string, apiKey?: string) => {
    setNote(text);
    setSecret(apiKey);
    props.reload();
  };
  return html`<section aria-labelledby="keys-h">
    <h2 id="keys-h">API keys</h2>
    <${Notice} text=${note} />
    ${secret ? html`<${ShownOnce} label="New API key" secret=${secret} />` : null}
    <div class="table-wrap"><table class="cards">
      <caption class="visually-hidden">API keys</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Label</th><th scope="col">Scope</th><th scope="col">Status</th>
        <th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
      <tbody>${pages.shown.map((k) => html`<${KeyRow} key=${k.keyId} view=${k} onChanged=${changed} />`)}</tbody>
    </table></div>
    <${Pager} label="API keys" ...${pages} />
    <h3>Create a key</h3>
    <${CreateKey} workspaceId=${props.workspaceId} onCreated=${(apiKey: string) => changed('Created a key.', apiKey)} />
  </section>`;
}
