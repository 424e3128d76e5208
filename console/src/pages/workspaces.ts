// /console/workspaces: every workspace, searched by name or id, paged; and the form that
// creates one (its first key shown once).
import { useMemo, useState } from 'preact/hooks';
import { adminData } from '../api.js';
import { paths } from '../router.js';
import { ErrorNote, html, Link, Pager, ShownOnce, time, useAction, useLoad, usePages } from '../ui.js';

export interface Workspace {
  id: string;
  name: string;
  plan: string;
  createdAt: string;
}

interface Created {
  workspaceId: string;
  name: string;
  plan: string;
  keyId: string;
  apiKey: string;
}

function CreateWorkspace(props: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState('free');
  const [id, setId] = useState('');
  const [created, setCreated] = useState<Created | undefined>();
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const made = await adminData<Created>('POST', '/workspaces', { name, plan, ...(id.trim() ? { id: id.trim() } : {}) });
      setCreated(made);
      setName('');
      setId('');
      props.onCreated();
    });
  };
  return html`<section aria-labelledby="create-ws">
    <h2 id="create-ws">Create a workspace</h2>
    <form class="inline-form" onSubmit=${submit}>
      <div><label for="ws-name">Name</label><input id="ws-name" required maxlength="100" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /></div>
      <div><label for="ws-plan">Plan</label>
        <select id="ws-plan" value=${plan} onChange=${(e: Event) => setPlan((e.target as HTMLSelectElement).value)}>
          <option value="free">free</option><option value="pro">pro</option>
        </select></div>
      <div><label for="ws-id">Id (optional)</label><input id="ws-id" value=${id} placeholder="generated" onInput=${(e: Event) => setId((e.target as HTMLInputElement).value)} /></div>
      <div><button type="submit" disabled=${action.busy}>Create workspace</button></div>
    </form>
    <${ErrorNote} error=${action.error} />
    ${created
      ? html`<div>
          <p class="notice" role="status">Created workspace <${Link} href=${paths.workspace(created.workspaceId)}>${created.name}</${Link}> (<span class="mono">${created.workspaceId}</span>).</p>
          <${ShownOnce} label="First API key" secret=${created.apiKey} />
        </div>`
      : null}
  </section>`;
}

export function WorkspacesPage() {
  const list = useLoad(() => adminData<Workspace[]>('GET', '/workspaces'), []);
  const [query, setQuery] = useState('');
  const found = useMemo(() => {
    const q = query.trim().toLowerCase();
    const all = [...(list.data ?? [])].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    return q ? all.filter((w) => w.name.toLowerCase().includes(q) || w.id.toLowerCase().includes(q)) : all;
  }, [list.data, query]);
  const pages = usePages(found, 20);
  return html`<h1>Workspaces</h1>
    <div class="row">
      <label for="ws-search">Search by name or id</label>
      <input id="ws-search" type="search" value=${query} onInput=${(e: Event) => {
        setQuery((e.target as HTMLInputElement).value);
        pages.setPage(0);
      }} />
    </div>
    <${ErrorNote} error=${list.error} />
    ${list.loading && !list.data ? html`<p role="status">Loading…</p>` : null}
    ${list.data
      ? html`<div class="table-wrap"><table class="cards">
          <caption class="visually-hidden">Workspaces</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Plan</th><th scope="col">Created</th></tr></thead>
          <tbody>${pages.shown.map(
            (w) => html`<tr key=${w.id}>
              <td data-label="Name"><${Link} href=${paths.workspace(w.id)}>${w.name}</${Link}></td>
              <td data-label="Id" class="mono">${w.id}</td><td data-label="Plan">${w.plan}</td><td data-label="Created">${time(w.createdAt)}</td></tr>`,
          )}</tbody></table></div>
          ${found.length === 0 ? html`<p>No workspace matches.</p>` : null}
          <${Pager} label="Workspaces" ...${pages} />`
      : null}
    <${CreateWorkspace} onCreated=${list.reload} />`;
}
