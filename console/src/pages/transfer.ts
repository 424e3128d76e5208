// The workspace page's export and import: a download of every player as NDJSON (a plain link:
// the browser streams it to disk), and an upload of such a file, streamed by the browser too,
// answered with the import's summary and its refused lines (docs/backups.md).
import { useState } from 'preact/hooks';
import { adminUpload, enc } from '../api.js';
import { ErrorNote, html, useAction } from '../ui.js';

interface LineReport {
  line: number;
  userId?: string;
  code: string;
  error: string;
}

interface ImportSummary {
  mode: string;
  complete: boolean;
  lines: number;
  imported: number;
  replaced: number;
  unchanged: number;
  skipped: number;
  failed: number;
  erased: number;
  errors: LineReport[];
  ms: number;
}

const MODES: ReadonlyArray<[string, string]> = [
  ['skip', 'skip: keep players that exist'],
  ['overwrite', 'overwrite: replace players that exist'],
  ['fail', 'fail: write nothing if any player exists'],
];

function Summary(props: { summary: ImportSummary }) {
  const s = props.summary;
  return html`<div role="status" class="import-summary">
    <p>${s.complete ? 'Imported' : 'Nothing written'} (mode ${s.mode}, ${(s.ms / 1000).toFixed(1)} s): ${s.lines} lines,
      ${s.imported} new, ${s.replaced} replaced, ${s.unchanged} unchanged, ${s.skipped} skipped, ${s.failed} failed${s.erased > 0 ? `, ${s.erased} not imported because they were erased since the export` : ''}.</p>
    ${s.errors.length > 0
      ? html`<table>
          <caption>Refused lines</caption>
          <thead><tr><th scope="col">Line</th><th scope="col">Player</th><th scope="col">Code</th><th scope="col">Problem</th></tr></thead>
          <tbody>${s.errors.map((e) => html`<tr><td>${e.line}</td><td class="mono">${e.userId ?? ''}</td><td class="mono">${e.code}</td><td>${e.error}</td></tr>`)}</tbody>
        </table>`
      : null}
  </div>`;
}

export function TransferSection(props: { workspaceId: string; onImported: () => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [mode, setMode] = useState('skip');
  const [summary, setSummary] = useState<ImportSummary | undefined>();
  const action = useAction();
  const id = props.workspaceId;
  return html`<section aria-labelledby="transfer-h">
    <h2 id="transfer-h">Export and import</h2>
    <p>Every player as NDJSON, one line a player; an export loads into this workspace or another.</p>
    <p><a class="button" href=${`/admin/v1/workspaces/${enc(id)}/export`} download=${`${id}.ndjson`}>Download export</a></p>
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      if (!file) return;
      setSummary(undefined);
      void action.run(async () => {
        setSummary(await adminUpload<ImportSummary>(`/workspaces/${enc(id)}/import?mode=${enc(mode)}`, file, 'application/x-ndjson'));
        props.onImported();
      });
    }}>
      <div><label for="import-file">Export file</label>
        <input id="import-file" type="file" accept=".ndjson,application/x-ndjson" required
          onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0])} /></div>
      <div><label for="import-mode">Existing players</label>
        <select id="import-mode" value=${mode} onChange=${(e: Event) => setMode((e.target as HTMLSelectElement).value)}>
          ${MODES.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select></div>
      <button type="submit" disabled=${action.busy || !file}>Import</button>
    </form>
    ${summary ? html`<${Summary} summary=${summary} />` : null}
    <${ErrorNote} error=${action.error} />
  </section>`;
}
