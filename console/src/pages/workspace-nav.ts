// The head of every page of one workspace: the way back (Workspaces › the workspace's name,
// its id beside it, secondary), the page's title followed by the workspace's name (never its
// id alone), and the workspace's own navigation: its overview (keys, usage, games, export,
// settings as tabs), its players, the messages waiting for a player, and its leaderboards.
// A new page of a workspace is a route in router.ts, a page in pages/, and an entry below.
import type { ComponentChildren } from 'preact';
import { adminData, enc } from '../api.js';
import { paths } from '../router.js';
import { html, Icon, Link, useLoad } from '../ui.js';
import type { IconName } from '../icons.js';

export type WorkspaceSection = 'workspace' | 'players' | 'messages' | 'leaderboards';

const ENTRIES: ReadonlyArray<{ section: WorkspaceSection; label: string; icon: IconName; href: (id: string) => string }> = [
  { section: 'workspace', label: 'Overview and settings', icon: 'settings', href: paths.workspace },
  { section: 'players', label: 'Players', icon: 'players', href: paths.players },
  { section: 'messages', label: 'Messages', icon: 'messages', href: (id) => paths.messages(id) },
  { section: 'leaderboards', label: 'Leaderboards', icon: 'leaderboards', href: paths.leaderboards },
];

/** `current`: the section the page belongs to (a player's page is under Players, a board's under Leaderboards). */
export function WorkspaceNav(props: { workspaceId: string; current: WorkspaceSection }) {
  return html`<nav class="subnav" aria-label="Workspace">
    ${ENTRIES.map((e) => html`<${Link} key=${e.section} href=${e.href(props.workspaceId)} current=${props.current === e.section}><${Icon} name=${e.icon} />${e.label}</${Link}>`)}
  </nav>`;
}

/**
 * The head of a workspace's page. `title` is the page's own (`Players`, `Player 42`); the
 * workspace's name follows it (`Players · Demo game`), and its id is in the breadcrumb.
 * `name` when the page has loaded the workspace already; `parent` a crumb between the
 * workspace and this page (a player's page names its players list).
 */
export function WorkspaceHeader(props: {
  workspaceId: string;
  current: WorkspaceSection;
  title: ComponentChildren;
  name?: string;
  parent?: { href: string; label: string };
  /** The workspace's own page: its name is the title. */
  own?: boolean;
}) {
  const id = props.workspaceId;
  const loaded = useLoad(
    () => (props.name === undefined ? adminData<{ name: string }>('GET', `/workspaces/${enc(id)}`).then((w) => w.name) : Promise.resolve(props.name)),
    [id, props.name],
  );
  const name = props.name ?? loaded.data;
  return html`<nav class="crumbs" aria-label="Breadcrumb">
      <${Link} href=${paths.workspaces()}><${Icon} name="back" />Workspaces</${Link}>
      ${props.own ? null : html` › <${Link} href=${paths.workspace(id)}>${name ?? 'Workspace'}</${Link}>`}
      ${' '}<span class="id mono" title="Workspace id">${id}</span>
      ${props.parent ? html` › <${Link} href=${props.parent.href}>${props.parent.label}</${Link}>` : null}
    </nav>
    <h1>${props.title}${props.own || !name ? null : html`<span class="h1-of"> · ${name}</span>`}</h1>
    <${WorkspaceNav} workspaceId=${id} current=${props.current} />`;
}
