// The operator console: sign-in, the frame (navigation, sign-out) and the page of the URL.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { resumeSession, signIn, signOut, whenSignedOut } from './api.js';
import { AuditPage } from './pages/audit.js';
import { OverviewPage } from './pages/overview.js';
import { PlayersPage } from './pages/players.js';
import { BansPage } from './pages/bans.js';
import { ErasuresPage } from './pages/erasures.js';
import { LeaderboardPage } from './pages/leaderboard.js';
import { LeaderboardsPage } from './pages/leaderboards.js';
import { MessagesPage } from './pages/messages.js';
import { PlayerPage } from './pages/player.js';
import { PlayerSearchPage } from './pages/player-search.js';
import { WorkspacePage } from './pages/workspace.js';
import { WorkspacesPage } from './pages/workspaces.js';
import { linkClick, paths, useRoute, type Route } from './router.js';
import { ErrorNote, html, Icon, Link, useAction } from './ui.js';
import type { IconName } from './icons.js';

type Session = 'checking' | 'signed-out' | 'signed-in';

/** The main navigation. A workspace's own pages have a navigation of their own (pages/workspace-nav.ts). */
const NAV: ReadonlyArray<{ section: string; label: string; href: () => string; icon: IconName }> = [
  { section: 'overview', label: 'Overview', href: paths.overview, icon: 'overview' },
  { section: 'workspaces', label: 'Workspaces', href: paths.workspaces, icon: 'workspaces' },
  { section: 'search', label: 'Find a player', href: () => paths.search(), icon: 'search' },
  { section: 'bans', label: 'Bans', href: paths.bans, icon: 'bans' },
  { section: 'audit', label: 'Audit', href: paths.audit, icon: 'audit' },
  { section: 'erasures', label: 'Erasures', href: paths.erasures, icon: 'erasures' },
];

/** Which main section each page belongs to (the one its link marks as current). */
const SECTION_OF: Record<Route['page'], string | undefined> = {
  overview: 'overview',
  workspaces: 'workspaces',
  search: 'search',
  workspace: 'workspaces',
  players: 'workspaces',
  player: 'workspaces',
  messages: 'workspaces',
  leaderboards: 'workspaces',
  leaderboard: 'workspaces',
  bans: 'bans',
  audit: 'audit',
  erasures: 'erasures',
  missing: undefined,
};

const TITLE: Record<Route['page'], string> = {
  overview: 'Overview',
  workspaces: 'Workspaces',
  search: 'Find a player',
  workspace: 'Workspace',
  players: 'Players',
  player: 'Player',
  messages: 'Messages',
  leaderboards: 'Leaderboards',
  leaderboard: 'Leaderboard',
  bans: 'Bans',
  audit: 'Audit',
  erasures: 'Erasures',
  missing: 'Not found',
};

function SignIn(props: { onSignedIn: () => void; ended: boolean }) {
  const [token, setToken] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await signIn(token);
      setToken('');
      props.onSignedIn();
    });
  };
  return html`<main id="main" class="sign-in">
    <h1>Operator console</h1>
    ${props.ended ? html`<p class="notice" role="status">Signed out. Sign in to go on.</p>` : null}
    <form onSubmit=${submit}>
      <label for="admin-token">Admin token</label>
      <input id="admin-token" type="password" autocomplete="off" required value=${token}
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled=${action.busy}>Sign in</button>
    </form>
    <${ErrorNote} error=${action.error} />
  </main>`;
}

function Page(props: { route: Route }) {
  const route = props.route;
  switch (route.page) {
    case 'overview':
      return html`<${OverviewPage} />`;
    case 'players':
      return html`<${PlayersPage} key=${route.workspaceId} workspaceId=${route.workspaceId} />`;
    case 'workspaces':
      return html`<${WorkspacesPage} />`;
    case 'search':
      return html`<${PlayerSearchPage} />`;
    case 'workspace':
      return html`<${WorkspacePage} key=${route.workspaceId} workspaceId=${route.workspaceId} />`;
    case 'player':
      return html`<${PlayerPage} key=${route.workspaceId + '/' + route.userId} workspaceId=${route.workspaceId} userId=${route.userId} />`;
    case 'messages':
      return html`<${MessagesPage} key=${route.workspaceId + '/' + (route.userId ?? '')} workspaceId=${route.workspaceId} userId=${route.userId} />`;
    case 'leaderboards':
      return html`<${LeaderboardsPage} key=${route.workspaceId} workspaceId=${route.workspaceId} />`;
    case 'leaderboard':
      return html`<${LeaderboardPage} key=${route.workspaceId + '/' + route.board} workspaceId=${route.workspaceId} board=${route.board} />`;
    case 'bans':
      return html`<${BansPage} />`;
    case 'audit':
      return html`<${AuditPage} />`;
    case 'erasures':
      return html`<${ErasuresPage} />`;
    default:
      return html`<h1>No such page</h1><p><${Link} href=${paths.workspaces()}>Go to the workspaces</${Link}></p>`;
  }
}

function App() {
  const [session, setSession] = useState<Session>('checking');
  const [ended, setEnded] = useState(false);
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const firstPage = useRef(true);
  // A page change inside the console moves focus to the new page, as a page load would.
  useEffect(() => {
    if (firstPage.current) firstPage.current = false;
    else main.current?.focus();
  }, [location.pathname]);
  useEffect(() => {
    whenSignedOut(() => {
      setEnded(true);
      setSession('signed-out');
    });
    resumeSession().then(
      (s) => setSession(s ? 'signed-in' : 'signed-out'),
      () => setSession('signed-out'),
    );
  }, []);
  useEffect(() => {
    document.title = `${TITLE[route.page]} · Operator console`;
  }, [route.page]);
  if (session === 'checking') return html`<main id="main"><p role="status">Loading…</p></main>`;
  if (session === 'signed-out') return html`<${SignIn} ended=${ended} onSignedIn=${() => setSession('signed-in')} />`;
  const section = SECTION_OF[route.page];
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header>
      <span class="brand"><span class="logo" aria-hidden="true">PD</span>Operator console</span>
      <nav aria-label="Main">
        ${NAV.map((item) => html`<a key=${item.section} href=${item.href()} aria-current=${section === item.section ? 'page' : undefined} onClick=${linkClick}><${Icon} name=${item.icon} />${item.label}</a>`)}
      </nav>
      <button type="button" class="secondary sign-out" onClick=${() => {
        void signOut().finally(() => {
          setEnded(true);
          setSession('signed-out');
        });
      }}><${Icon} name="signOut" />Sign out</button>
    </header>
    <main id="main" tabindex="-1" ref=${main}><${Page} route=${route} /></main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
