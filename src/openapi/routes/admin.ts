// The admin API's routes (ops listener, /admin/v1, only when ADMIN_TOKEN is set) as the
// OpenAPI document describes them. Adding an admin route: one adminRoute(...) line here with
// the schema its handler validates with and the schema of its answer's `data`.
import {
  allowEntryList,
  allowedEntry,
  apiKeyRecord,
  auditEntryList,
  banPage,
  banRecord,
  createdKeyRecord,
  createdWorkspaceRecord,
  deletedCount,
  deletedMessages,
  playerMessages,
  sentPlayerMessage,
  playerSessionView,
  playerAtVersion,
  playerHistoryPage,
  restoredPlayer,
  releasedSession,
  deletedWorkspace,
  keyView,
  keyViewList,
  playerEntry,
  playerRead,
  removedAllowEntry,
  rotatedKey,
  usageReport,
  importSummary,
  workspaceExport,
  violationList,
  workspaceDetails,
  workspaceList,
  workspaceRecord,
} from '../../schemas/admin-responses.js';
import {
  adminSendMessageBody,
  auditQuery,
  createKeyBody,
  createWorkspaceBody,
  deleteMessagesQuery,
  deletePlayerQuery,
  deleteWorkspaceQuery,
  historyQuery,
  importBody,
  importQuery,
  playerListQuery,
  playerSearchQuery,
  playerQuery,
  restorePlayerBody,
  versionParam,
  rotateKeyBody,
  setPlayerBody,
  updateWorkspaceBody,
  usageQuery,
} from '../../schemas/admin.js';
import { addBanBody, allowBody, bansQuery, keyDevBody, violationsQuery } from '../../schemas/gate-admin.js';
import { gateState, overview, playerList, playerSearch } from '../../schemas/admin-console.js';
import { adminRoute, type RouteSpec } from '../route-spec.js';
import { adminLeaderboardRoutes } from './admin-leaderboards.js';

const PLAYER = '/workspaces/:id/players/:userId';
const addressParam = {
  address: { type: 'string', description: 'An IPv4 or IPv6 address, URL-encoded.' },
} as const;
const entryParam = {
  entry: { type: 'string', description: 'An address or range, URL-encoded (a range\'s slash as %2F).' },
} as const;

const workspaceRoutes = [
  adminRoute('get', '/workspaces', 'List workspaces', { ok: workspaceList }),
  adminRoute('post', '/workspaces', 'Create a workspace and its first API key', {
    body: createWorkspaceBody,
    ok: createdWorkspaceRecord,
    okStatus: 201,
    errors: [409],
    errorText: { 409: 'A workspace with this id exists.' },
  }),
  adminRoute('get', '/workspaces/:id', 'Read a workspace and its keys', { ok: workspaceDetails, errors: [404] }),
  adminRoute('patch', '/workspaces/:id', 'Rename a workspace or change its plan', {
    body: updateWorkspaceBody,
    ok: workspaceRecord,
    errors: [404],
  }),
  adminRoute('delete', '/workspaces/:id', 'Delete a workspace, its keys and every player\'s data', {
    query: deleteWorkspaceQuery,
    ok: deletedWorkspace,
    errors: [400, 404],
    errorText: { 404: 'The workspace does not exist (force=true sweeps its leftovers anyway).' },
  }),
  adminRoute('get', '/workspaces/:id/usage', 'Requests and 429s per day, players, and keys\' last use', {
    query: usageQuery,
    ok: usageReport,
    errors: [400, 404],
  }),
  adminRoute('get', '/workspaces/:id/export', "Every player of the workspace as NDJSON, streamed", {
    ok: workspaceExport,
    contentType: 'application/x-ndjson',
    errors: [404],
    description: 'One line per player, each read in one step. docs/backups.md describes the format.',
  }),
  adminRoute('post', '/workspaces/:id/import', 'Load an NDJSON export into the workspace (streamed)', {
    query: importQuery,
    body: importBody,
    bodyContentType: 'application/x-ndjson',
    ok: importSummary,
    errors: [404],
    errorText: { 415: 'The upload is not application/x-ndjson.' },
    description: 'Answers 200 with a summary whenever the upload was read, bad lines listed by number in `errors`.',
  }),
];

const keyRoutes = [
  adminRoute('get', '/workspaces/:id/keys', 'List the API keys of a workspace', { ok: keyViewList, errors: [404] }),
  adminRoute('post', '/workspaces/:id/keys', 'Create an API key for a workspace (no body: a write key that never expires)', {
    body: createKeyBody,
    ok: createdKeyRecord,
    okStatus: 201,
    errors: [404],
  }),
  adminRoute('post', '/keys/:keyId/revoke', 'Revoke an API key, at once on every instance', { ok: keyView, errors: [404] }),
  adminRoute('post', '/keys/:keyId/rotate', 'Replace an API key, the old one working for a grace period', {
    body: rotateKeyBody,
    ok: rotatedKey,
    okStatus: 201,
    errors: [404, 409],
    errorText: { 409: 'The key is revoked or expired: create a new key instead.' },
  }),
];

const playerRoutes = [
  adminRoute('get', '/workspaces/:id/players', 'The players of a workspace, newest written first, or found by user id', {
    query: playerListQuery,
    ok: playerList,
    errors: [400, 404],
    description:
      'A page of at most `limit` players (default 25, at most 100) from the players list the write path keeps; pass `next` as `cursor` for the next page. ' +
      '`userId` finds one player exactly (also one written before the list existed); `prefix` searches ids by their start, in pages. docs/console.md.',
  }),
  adminRoute('get', '/players/search', 'A user id looked up in every workspace, in pages of workspaces', {
    query: playerSearchQuery,
    ok: playerSearch,
    errors: [400],
    description:
      'Checks at most `limit` workspaces (default 100, at most 500), in id order, for a player with data of exactly this user id; pass `next` as `cursor` for the next workspaces. ' +
      'Each check is one EXISTS in the workspace\'s slot. Not audited: it shows no player data. docs/console.md.',
  }),
  adminRoute('get', PLAYER, 'Read one value of a player (?key=), or export all of them', {
    query: playerQuery,
    ok: playerRead,
    errors: [400, 404],
    errorText: { 404: 'The workspace, the player or the key does not exist.' },
  }),
  adminRoute('put', PLAYER, 'Overwrite one value of a player', {
    body: setPlayerBody,
    ok: playerEntry,
    errors: [404, 409, 413],
    errorText: {
      409: 'TOO_MANY_KEYS; SESSION_LOCKED: a game server holds the player, release its session first; VERSION_CONFLICT: ifVersion did not match (the answer carries the current version).',
      413: 'PAYLOAD_TOO_LARGE, or PLAYER_TOO_LARGE: the player would pass MAX_PLAYER_BYTES.',
    },
  }),
  adminRoute('delete', PLAYER, 'Delete one value of a player (?key=), or all of them', {
    query: deletePlayerQuery,
    ok: deletedCount,
    errors: [400, 404, 409],
    errorText: { 409: 'SESSION_LOCKED: a game server holds the player, release its session first; VERSION_CONFLICT: ifVersion did not match.' },
  }),
  adminRoute('get', `${PLAYER}/session`, "The session that holds the player (a game server's lock), if any", {
    ok: playerSessionView,
    errors: [400, 404],
  }),
  adminRoute('delete', `${PLAYER}/session`, 'Force-release the session that holds the player (a crashed server)', {
    ok: releasedSession,
    errors: [400, 404],
    errorText: { 404: 'The workspace does not exist, or no session holds the player.' },
  }),
  adminRoute('get', `${PLAYER}/history`, 'The versions of a player that can still be read and restored, newest first', {
    query: historyQuery,
    ok: playerHistoryPage,
    errors: [400, 404],
    errorText: { 404: 'NOT_FOUND: no such workspace; PLAYER_NOT_FOUND: the player was never written.' },
    description:
      'Pages of at most `limit` versions (default 20, at most 100). Pass the answer\'s `nextBefore` as `before` for the next page. ' +
      'Each version names the write that made it; the oldest retained one (and version 0) have nulls there. docs/history.md.',
  }),
  adminRoute('get', `${PLAYER}/history/:version`, 'The whole player as it was at a retained version', {
    params: { version: versionParam },
    ok: playerAtVersion,
    errors: [400, 404],
    errorText: {
      404: 'NOT_FOUND: no such workspace; PLAYER_NOT_FOUND: the player was never written; VERSION_NOT_RETAINED: the history no longer keeps that version (or it does not exist yet).',
    },
  }),
  adminRoute('post', `${PLAYER}/restore`, "Make the player's data what it was at a retained version, as a new version", {
    body: restorePlayerBody,
    ok: restoredPlayer,
    errors: [403, 404, 409, 413],
    errorText: {
      403: "STORAGE_QUOTA_EXCEEDED: the data the restore adds would take the workspace past its plan's quota (nothing written, no session ended).",
      404: 'NOT_FOUND: no such workspace; PLAYER_NOT_FOUND: the player was never written; VERSION_NOT_RETAINED: the history no longer keeps that version.',
      409: 'SESSION_LOCKED: a game server holds the player (restore with force to end its session), or took it again between force and the write (retry); VERSION_CONFLICT: the player kept changing during three attempts; TOO_MANY_KEYS.',
      413: 'PAYLOAD_TOO_LARGE, or PLAYER_TOO_LARGE: the version restored is larger than MAX_PLAYER_BYTES allows now.',
    },
    description: 'Recorded in the audit list (`player.restore`). docs/history.md, "Restore".',
  }),
  adminRoute('get', `${PLAYER}/messages`, 'The messages waiting for the player, oldest first', {
    ok: playerMessages,
    errors: [400, 404],
    description: 'Audited as `player.messages.view` (a person reads what was sent to the player). docs/safe-saves.md, "Messages to players".',
  }),
  adminRoute('post', `${PLAYER}/messages`, 'Leave a message for the player, processed by the server that holds it', {
    body: adminSendMessageBody,
    ok: sentPlayerMessage,
    errors: [400, 404, 409, 413],
    errorText: { 409: 'INBOX_FULL: MESSAGES_MAX_WAITING messages already wait for the player.', 413: 'PAYLOAD_TOO_LARGE: the body, or the message larger than MESSAGE_MAX_BYTES.' },
    description: 'The same limits as a game server\'s send. Audited as `player.message` (the message itself is not recorded).',
  }),
  adminRoute('delete', `${PLAYER}/messages`, 'Delete one waiting message (?id=), or all of them', {
    query: deleteMessagesQuery,
    ok: deletedMessages,
    errors: [400, 404],
    description: 'Audited as `player.messages.delete`.',
  }),
];

const auditRoutes = [
  adminRoute('get', '/audit', 'The newest audit entries, optionally of one workspace', {
    query: auditQuery,
    ok: auditEntryList,
    errors: [400],
  }),
];

const gateRoutes = [
  adminRoute('get', '/bans', 'List banned addresses, one page at a time', {
    query: bansQuery,
    ok: banPage,
    errors: [400],
    description:
      'Pages of at most `limit` bans (default 100, at most 1000) in the order of their addresses. ' +
      'Pass the answer\'s `next` as `after` for the next page; `next` is null on the last one.',
  }),
  adminRoute('post', '/bans', 'Ban an address by hand', {
    body: addBanBody,
    ok: banRecord,
    errors: [409],
    errorText: { 409: 'The address is already banned, or allow-listed.' },
  }),
  adminRoute('get', '/bans/:address', 'Read one ban', { params: addressParam, ok: banRecord, errors: [400, 404] }),
  adminRoute('delete', '/bans/:address', 'Lift a ban on every instance', { params: addressParam, ok: banRecord, errors: [400, 404] }),
  adminRoute('get', '/ban-allow', 'The allow-list: addresses and ranges never banned', { ok: allowEntryList }),
  adminRoute('post', '/ban-allow', 'Allow-list an address or range, lifting the bans it covers', {
    body: allowBody,
    ok: allowedEntry,
  }),
  adminRoute('delete', '/ban-allow/:entry', 'Remove an allow-list entry', {
    params: entryParam,
    ok: removedAllowEntry,
    errors: [400, 404],
  }),
  adminRoute('get', '/violations', 'Recent gate violations, newest first', { query: violationsQuery, ok: violationList, errors: [400] }),
  adminRoute('post', '/keys/:keyId/dev', 'Mark an API key as a development key, or back to production', {
    body: keyDevBody,
    ok: apiKeyRecord,
    errors: [404],
  }),
];

const consoleRoutes = [
  adminRoute('get', '/overview', 'The installation at a glance: the last hour of traffic, memory, instances, busiest workspaces, recent bans', {
    ok: overview,
    description:
      'Every instance adds its counts to Redis every STATS_FLUSH_MS; this reads them with Redis INFO and a few small keys, ' +
      'so its cost does not grow with traffic (docs/console.md, "Overview").',
  }),
  adminRoute('get', '/gate', "The gate's mode on this instance, what it means, and its checks", { ok: gateState }),
];

export const adminRoutes: readonly RouteSpec[] = [
  ...workspaceRoutes,
  ...keyRoutes,
  ...playerRoutes,
  ...auditRoutes,
  ...gateRoutes,
  ...adminLeaderboardRoutes,
  ...consoleRoutes,
];
