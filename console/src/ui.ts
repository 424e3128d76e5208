// Small shared pieces of the page: links, error notes, paging, loading, copy, JSON view and editor.
import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { linkClick, setSearchParam, useSearch } from './router.js';
import { Icon, type IconName } from './icons.js';

export { html, Icon };
export { JsonEditor, JsonTree, pretty } from './json-ui.js';

/** Bytes for people: 512 bytes, 3.4 KiB, 1.2 GiB. */
export function size(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = Math.max(0, bytes);
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit++;
  }
  return `${unit === 0 ? n : n.toFixed(1)} ${units[unit]}`;
}

/**
 * One panel of a page (the overview's are all of this kind): a titled section whose content
 * loads on its own, so a slow or failing panel never holds up the others.
 */
export function Panel(props: { id: string; title: string; children: ComponentChildren; wide?: boolean }) {
  return html`<section class=${`panel${props.wide ? ' wide' : ''}`} aria-labelledby=${`${props.id}-h`}>
    <h2 id=${`${props.id}-h`}>${props.title}</h2>
    ${props.children}
  </section>`;
}

export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return html`<a href=${props.href} class=${props.class} aria-current=${props.current ? 'page' : undefined} onClick=${linkClick}>${props.children}</a>`;
}

export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}

/**
 * An error next to the control that caused it. `words` puts an error the page knows (a full
 * inbox, a player not on a board) in the console's own words; others are the service's message.
 */
export function ErrorNote(props: { error: unknown; words?: (err: unknown) => string | undefined }) {
  if (props.error === undefined || props.error === null) return null;
  return html`<p class="error" role="alert">${props.words?.(props.error) ?? describeError(props.error)}</p>`;
}

export function Notice(props: { text: string | undefined }) {
  if (!props.text) return null;
  return html`<p class="notice" role="status">${props.text}</p>`;
}

/** Loads on mount and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) => mine === generation.current && setState({ error, loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/** Runs an action, keeping its error and a busy flag for the button that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

export function usePages<T>(items: readonly T[], size: number) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.min(page, pages - 1);
  const shown = useMemo(() => items.slice(current * size, current * size + size), [items, current, size]);
  return { shown, page: current, pages, setPage, total: items.length };
}

export function Pager(props: { label: string; page: number; pages: number; total: number; setPage: (n: number) => void }) {
  if (props.pages <= 1) return null;
  return html`<nav class="pager" aria-label=${`${props.label} pages`}>
    <button type="button" disabled=${props.page === 0} onClick=${() => props.setPage(props.page - 1)}>Previous page</button>
    <span>Page ${props.page + 1} of ${props.pages} (${props.total} in all)</span>
    <button type="button" disabled=${props.page >= props.pages - 1} onClick=${() => props.setPage(props.page + 1)}>Next page</button>
  </nav>`;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/** A secret shown once: selectable text, a copy button, and the warning that it is not shown again. */
export function ShownOnce(props: { label: string; secret: string }) {
  const [copied, setCopied] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      input.current?.select();
      setCopied('Selected: press Ctrl+C (Cmd+C) to copy.');
    }
  };
  return html`<div class="secret" role="region" aria-label=${`${props.label}, shown once`}>
    <p class="warning"><strong>Copy this key now:</strong> it is shown once and is never shown again.</p>
    <label>${props.label}<input ref=${input} readonly value=${props.secret} class="mono" data-testid="new-api-key" /></label>
    <button type="button" onClick=${copy}>Copy key</button>
    <span role="status">${copied}</span>
  </div>`;
}

const LARGE = 400;

/** A value as formatted JSON; a large one starts folded. */
export function JsonView(props: { value: unknown; label: string }) {
  const text = JSON.stringify(props.value, null, 2);
  if (text.length <= LARGE) return html`<pre class="json" aria-label=${props.label}>${text}</pre>`;
  return html`<details class="json">
    <summary>${props.label}: ${text.length.toLocaleString('en')} characters (show)</summary>
    <pre>${text}</pre>
  </details>`;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, problem: (err as Error).message };
  }
}

/** A destructive action confirmed by typing a word (the workspace's name, the user id). */
export function TypedConfirm(props: { id: string; word: string; what: string; button: string; busy: boolean; onConfirm: () => void }) {
  const [typed, setTyped] = useState('');
  return html`<form class="danger" onSubmit=${(e: Event) => {
    e.preventDefault();
    if (typed === props.word) props.onConfirm();
  }}>
    <label for=${props.id}>To ${props.what}, type <strong class="mono">${props.word}</strong></label>
    <input id=${props.id} value=${typed} autocomplete="off" onInput=${(e: Event) => setTyped((e.target as HTMLInputElement).value)} />
    <button type="submit" class="destructive" disabled=${typed !== props.word || props.busy}>${props.button}</button>
  </form>`;
}

export interface TabDef {
  id: string;
  label: string;
  icon?: IconName;
  /** A number shown beside the label (the keys of a player, say). */
  count?: number;
  render: () => unknown;
}

/**
 * A tab bar over one panel (the WAI-ARIA tabs pattern: arrow keys, Home and End move between
 * tabs, Tab goes into the panel). The tab is the URL's `?tab=` (or `param`), so a link opens
 * the same tab and Back returns to the last one. Only the chosen tab's panel is rendered.
 */
export function Tabs(props: { label: string; tabs: TabDef[]; param?: string }) {
  const param = props.param ?? 'tab';
  const search = useSearch();
  const asked = search.get(param);
  const current = props.tabs.find((t) => t.id === asked) ?? props.tabs[0]!;
  const bar = useRef<HTMLDivElement>(null);
  const choose = (id: string, focus: boolean) => {
    setSearchParam(param, id === props.tabs[0]!.id ? undefined : id);
    if (focus) requestAnimationFrame(() => bar.current?.querySelector<HTMLButtonElement>(`#tab-${param}-${id}`)?.focus());
  };
  const onKey = (e: KeyboardEvent) => {
    const i = props.tabs.indexOf(current);
    const to = e.key === 'ArrowRight' ? (i + 1) % props.tabs.length
      : e.key === 'ArrowLeft' ? (i - 1 + props.tabs.length) % props.tabs.length
      : e.key === 'Home' ? 0 : e.key === 'End' ? props.tabs.length - 1 : -1;
    if (to < 0) return;
    e.preventDefault();
    choose(props.tabs[to]!.id, true);
  };
  return html`<div class="tabs" role="tablist" aria-label=${props.label} ref=${bar} onKeyDown=${onKey}>
      ${props.tabs.map((t) => html`<button type="button" role="tab" class="tab" key=${t.id} id=${`tab-${param}-${t.id}`}
        aria-selected=${t === current ? 'true' : 'false'} aria-controls=${`panel-${param}`} tabindex=${t === current ? 0 : -1}
        onClick=${() => choose(t.id, false)}>${t.icon ? html`<${Icon} name=${t.icon} />` : null}${t.label}${t.count === undefined ? null : html` <span class="tab-count">${t.count}</span>`}</button>`)}
    </div>
    <div role="tabpanel" id=${`panel-${param}`} aria-labelledby=${`tab-${param}-${current.id}`} tabindex="0" key=${current.id}>${current.render()}</div>`;
}
