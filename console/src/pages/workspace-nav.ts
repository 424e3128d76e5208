// The navigation inside one workspace, shown on each of its pages: its settings (keys, usage,
// games, export), its players, the messages waiting for a player, and its leaderboards. A new
// page of a workspace is a route in router.ts, a page in pages/, and an entry below.
import { paths } from '../router.js';
import { html, Link } from '../ui.js';

export type WorkspaceSection = 'workspace' | 'players' | 'messages' | 'leaderboards';

const ENTRIES: ReadonlyArray<{ section: WorkspaceSection; label: string; href: (id: string) => string }> = [
  { section: 'workspace', label: 'Settings, keys and usage', href: paths.workspace },
  { section: 'players', label: 'Players', href: paths.players },
  { section: 'messages', label: 'Messages', href: (id) => paths.messages(id) },
  { section: 'leaderboards', label: 'Leaderboards', href: paths.leaderboards },
];

/** `current`: the section the page belongs to (a player's page is under Players, a board's under Leaderboards). */
export function WorkspaceNav(props: { workspaceId: string; current: WorkspaceSection }) {
  return html`<nav class="subnav" aria-label="Workspace">
    ${ENTRIES.map((e) => html`<${Link} key=${e.section} href=${e.href(props.workspaceId)} current=${props.current === e.section}>${e.label}</${Link}>`)}
  </nav>`;
}
