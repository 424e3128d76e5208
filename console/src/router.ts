// Pages with their own URLs under /console/: the path is the state, so a link pasted into a
// support ticket opens the same page (after sign-in, which keeps the URL as it is).
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'overview' }
  | { page: 'workspaces' }
  | { page: 'search' }
  | { page: 'players'; workspaceId: string }
  | { page: 'workspace'; workspaceId: string }
  | { page: 'player'; workspaceId: string; userId: string }
  | { page: 'leaderboards'; workspaceId: string }
  | { page: 'leaderboard'; workspaceId: string; board: string }
  | { page: 'messages'; workspaceId: string; userId?: string }
  | { page: 'bans' }
  | { page: 'audit' }
  | { page: 'erasures' }
  | { page: 'missing' };

export function parseRoute(pathname: string): Route {
  const parts = pathname.replace(/^\/console\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'workspaces') {
    if (parts.length === 1) return { page: 'workspaces' };
    if (parts.length === 2) return { page: 'workspace', workspaceId: parts[1]! };
    if (parts.length === 3 && parts[2] === 'players') return { page: 'players', workspaceId: parts[1]! };
    if (parts.length === 4 && parts[2] === 'players') return { page: 'player', workspaceId: parts[1]!, userId: parts[3]! };
    if (parts.length === 3 && parts[2] === 'leaderboards') return { page: 'leaderboards', workspaceId: parts[1]! };
    if (parts.length === 3 && parts[2] === 'messages') return { page: 'messages', workspaceId: parts[1]! };
    if (parts.length === 4 && parts[2] === 'messages') return { page: 'messages', workspaceId: parts[1]!, userId: parts[3]! };
    if (parts.length === 4 && parts[2] === 'leaderboards') return { page: 'leaderboard', workspaceId: parts[1]!, board: parts[3]! };
  }
  if (parts.length === 1 && parts[0] === 'players') return { page: 'search' };
  if (parts.length === 1 && parts[0] === 'bans') return { page: 'bans' };
  if (parts.length === 1 && parts[0] === 'audit') return { page: 'audit' };
  if (parts.length === 1 && parts[0] === 'erasures') return { page: 'erasures' };
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'overview')) return { page: 'overview' };
  return { page: 'missing' };
}

export const paths = {
  overview: () => '/console/overview',
  workspaces: () => '/console/workspaces',
  search: (userId?: string) => `/console/players${userId ? `?userId=${encodeURIComponent(userId)}` : ''}`,
  players: (id: string) => `/console/workspaces/${encodeURIComponent(id)}/players`,
  workspace: (id: string) => `/console/workspaces/${encodeURIComponent(id)}`,
  player: (id: string, userId: string) => `/console/workspaces/${encodeURIComponent(id)}/players/${encodeURIComponent(userId)}`,
  leaderboards: (id: string) => `/console/workspaces/${encodeURIComponent(id)}/leaderboards`,
  messages: (id: string, userId?: string) =>
    `/console/workspaces/${encodeURIComponent(id)}/messages${userId === undefined ? '' : `/${encodeURIComponent(userId)}`}`,
  leaderboard: (id: string, board: string) => `/console/workspaces/${encodeURIComponent(id)}/leaderboards/${encodeURIComponent(board)}`,
  bans: () => '/console/bans',
  audit: () => '/console/audit',
  erasures: () => '/console/erasures',
};

const listeners = new Set<() => void>();

export function navigate(to: string): void {
  history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

export function useRoute(): Route {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return parseRoute(path);
}

/** The query of the URL (a page's tab), kept up to date as links and Back change it. */
export function useSearch(): URLSearchParams {
  const [search, setSearch] = useState(location.search);
  useEffect(() => {
    const update = () => setSearch(location.search);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return new URLSearchParams(search);
}

/** Sets one query parameter of the URL (a new history entry, so Back returns to the last tab). */
export function setSearchParam(name: string, value: string | undefined): void {
  const params = new URLSearchParams(location.search);
  if (value === undefined) params.delete(name);
  else params.set(name, value);
  const query = params.toString();
  navigate(`${location.pathname}${query ? `?${query}` : ''}`);
}

/** Follows a link inside the page, unless the user asked for a new tab or window. */
export function linkClick(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href')!);
}
