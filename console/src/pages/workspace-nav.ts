// The navigation inside one workspace, shown on its pages. The workspace's messages and
// leaderboards (issue 31) go here, one entry each, once their admin API exists:
//   Messages      /console/workspaces/<id>/messages      send a message, see waiting ones
//   Leaderboards  /console/workspaces/<id>/leaderboards  a board's top page, an entry's rank, remove an entry
// (a route in router.ts, a page in pages/, and the entry below).
import { paths } from '../router.js';
import { html, Link } from '../ui.js';

const ENTRIES = [
  { page: 'workspace', label: 'Settings, keys and usage', href: paths.workspace },
  { page: 'players', label: 'Players', href: paths.players },
] as const;

export function WorkspaceNav(props: { workspaceId: string; current: 'workspace' | 'players' | 'player' }) {
  return html`<nav class="subnav" aria-label="Workspace">
    ${ENTRIES.map(
      (e) => html`<${Link} key=${e.page} href=${e.href(props.workspaceId)} current=${props.current === e.page || (props.current === 'player' && e.page === 'players')}>${e.label}</${Link}>`,
    )}
  </nav>`;
}
