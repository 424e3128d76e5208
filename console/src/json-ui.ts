// The JSON editor and the JSON tree. The editor is a native <textarea> (labelled, keyboard- and
// screen-reader-friendly, as before) over a coloured copy of its text: syntax colours, and the
// character where the text stops being JSON underlined in place, named by line and column, with
// a button that puts the caret there. Invalid JSON is never sent. The tree shows a value as
// nested lists that fold (a button with aria-expanded), each node with a button that copies its path.
import { html } from 'htm/preact';
import { useMemo, useRef, useState } from 'preact/hooks';
import { jsonProblem, pathText, tokens } from './json.js';
import { Icon } from './icons.js';

/** A ready value: one line when short, indented otherwise. */
export function pretty(value: unknown): string {
  const flat = JSON.stringify(value);
  return flat.length <= 60 ? flat : JSON.stringify(value, null, 2);
}

function Highlighted(props: { text: string; errorAt: number | undefined }) {
  const parts = useMemo(() => {
    let at = 0;
    return tokens(props.text).map((t, i) => {
      const start = at;
      at += t.text.length;
      const wrong = props.errorAt !== undefined && props.errorAt >= start && props.errorAt < at;
      return html`<span key=${i} class=${`tok-${t.kind}${wrong ? ' tok-error' : ''}`}>${t.text}</span>`;
    });
  }, [props.text, props.errorAt]);
  const atEnd = props.errorAt !== undefined && props.errorAt >= props.text.length;
  // A trailing newline needs a character after it, or the copy is a line shorter than the text area.
  return html`<pre class="json-layer" aria-hidden="true">${parts}${atEnd ? html`<span class="tok-error"> </span>` : null}${'\n'}</pre>`;
}

export function JsonEditor(props: {
  id: string;
  label: string;
  initial: string;
  busy: boolean;
  submitLabel: string;
  onSubmit: (value: unknown) => void;
  onCancel?: () => void;
  /** Shown above the editor (a game server holding the player, say). */
  notice?: unknown;
}) {
  const [text, setText] = useState(props.initial);
  const area = useRef<HTMLTextAreaElement>(null);
  const layer = useRef<HTMLDivElement>(null);
  const empty = text.trim() === '';
  const problem = empty ? undefined : jsonProblem(text);
  const ok = !empty && !problem;
  const problemId = `${props.id}-problem`;
  const rows = Math.min(20, Math.max(4, text.split('\n').length + 1));
  const goTo = () => {
    const el = area.current;
    if (!el || !problem) return;
    el.focus();
    el.setSelectionRange(problem.offset, Math.min(text.length, problem.offset + 1));
  };
  return html`<form class="json-editor" onSubmit=${(e: Event) => {
    e.preventDefault();
    if (ok) props.onSubmit(JSON.parse(text));
  }}>
    <label for=${props.id}>${props.label}</label>
    ${props.notice ?? null}
    <div class="json-box" ref=${layer}>
      <${Highlighted} text=${text} errorAt=${problem?.offset} />
      <textarea ref=${area} id=${props.id} class="mono" rows=${rows} spellcheck=${false} autocomplete="off"
        aria-invalid=${ok || empty ? 'false' : 'true'} aria-describedby=${problemId}
        value=${text}
        onScroll=${(e: Event) => {
          const pre = layer.current?.firstElementChild as HTMLElement | null;
          if (pre) pre.scrollTop = (e.target as HTMLTextAreaElement).scrollTop;
        }}
        onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}></textarea>
    </div>
    <p id=${problemId} class=${ok || empty ? 'hint' : 'error'} aria-live="polite">
      ${ok ? 'Valid JSON.' : empty ? 'Type a JSON value: a number, "text", true, {...} or [...].' : `Not valid JSON: line ${problem!.line}, column ${problem!.column}: ${problem!.message}.`}
    </p>
    <div class="row">
      <button type="submit" disabled=${!ok || props.busy}>${props.submitLabel}</button>
      ${problem ? html`<button type="button" class="secondary" onClick=${goTo}>Go to the error</button>` : null}
      ${props.onCancel ? html`<button type="button" class="secondary" onClick=${props.onCancel}>Cancel</button>` : null}
    </div>
  </form>`;
}

const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => typeof v === 'object' && v !== null;
/** Children shown per node before "show all": a 10,000-item array stays quick to open. */
const CHILDREN_SHOWN = 100;

function CopyPath(props: { path: ReadonlyArray<string | number>; onCopied: (text: string) => void }) {
  const text = pathText(props.path);
  return html`<button type="button" class="copy-path" aria-label=${`Copy path ${text}`} title="Copy path"
    onClick=${async (e: Event) => {
      e.preventDefault();
      try {
        await navigator.clipboard.writeText(text);
        props.onCopied(`Copied ${text}`);
      } catch {
        props.onCopied(`Path: ${text}`);
      }
    }}><${Icon} name="copy" /></button>`;
}

function Leaf(props: { value: unknown }) {
  const v = props.value;
  const kind = typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'literal';
  return html`<span class=${`tok-${kind}`}>${JSON.stringify(v)}</span>`;
}

function Node(props: { name: string; value: unknown; path: Array<string | number>; depth: number; onCopied: (t: string) => void }) {
  const { value, path } = props;
  const [all, setAll] = useState(false);
  const [open, setOpen] = useState(props.depth < 3);
  if (!isContainer(value)) {
    return html`<li><span class="tok-key">${props.name}</span>: <${Leaf} value=${value} /> <${CopyPath} path=${path} onCopied=${props.onCopied} /></li>`;
  }
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const shown = all ? entries : entries.slice(0, CHILDREN_SHOWN);
  const summary = Array.isArray(value) ? `[${entries.length} item${entries.length === 1 ? '' : 's'}]` : `{${entries.length} key${entries.length === 1 ? '' : 's'}}`;
  // A button that folds (aria-expanded), not <details>: the copy button beside it may not sit
  // inside a <summary> (nested controls).
  return html`<li>
    <button type="button" class="fold" aria-expanded=${open ? 'true' : 'false'} onClick=${() => setOpen(!open)}>
      <span aria-hidden="true">${open ? '▾' : '▸'}</span> <span class="tok-key">${props.name}</span></button>
    <span class="meta">${summary}</span> <${CopyPath} path=${path} onCopied=${props.onCopied} />
    ${open
      ? html`<ul class="json-tree">
          ${shown.map(([k, v]) => html`<${Node} key=${k} name=${typeof k === 'number' ? `[${k}]` : k} value=${v} path=${[...path, k]} depth=${props.depth + 1} onCopied=${props.onCopied} />`)}
          ${entries.length > shown.length ? html`<li><button type="button" class="secondary" onClick=${() => setAll(true)}>Show all ${entries.length}</button></li>` : null}
        </ul>`
      : null}
  </li>`;
}

/** A value as a tree: objects and arrays fold (the first three levels open), every node's path can be copied. */
export function JsonTree(props: { value: unknown; label: string; name: string }) {
  const [copied, setCopied] = useState('');
  return html`<div class="json-view" role="group" aria-label=${props.label}>
    ${isContainer(props.value)
      ? html`<ul class="json-tree root"><${Node} name=${props.name} value=${props.value} path=${[props.name]} depth=${0} onCopied=${setCopied} /></ul>`
      : html`<p class="json-leaf"><${Leaf} value=${props.value} /></p>`}
    <span role="status" class="meta">${copied}</span>
  </div>`;
}
