// The admin API's leaderboard routes (admin/leaderboards.ts) as the OpenAPI document describes them.
import {
  adminBoardPage,
  adminBoardPageQuery,
  adminBoardRank,
  adminBoardRankQuery,
  boardEntryRemoval,
  boardList,
  boardParam,
  boardRecord,
  boardRemoval,
  updateBoardBody,
} from '../../schemas/admin-leaderboards.js';
import { adminRoute, type RouteSpec } from '../route-spec.js';

const BOARD = '/workspaces/:id/leaderboards/:board';
const NO_BOARD = 'NOT_FOUND: no such workspace, or no such board in it.';

export const adminLeaderboardRoutes: readonly RouteSpec[] = [
  adminRoute('get', '/workspaces/:id/leaderboards', "List a workspace's leaderboards, with their periods, follow and entries", {
    ok: boardList,
    errors: [404],
  }),
  adminRoute('get', BOARD, 'A page of a leaderboard, best first', {
    params: boardParam,
    query: adminBoardPageQuery,
    ok: adminBoardPage,
    errors: [400, 404],
    errorText: { 404: `${NO_BOARD} PERIOD_NOT_KEPT: the board does not keep that period.` },
  }),
  adminRoute('patch', BOARD, "Set a leaderboard's periods or the player key it follows (registers a board not written yet)", {
    params: boardParam,
    body: updateBoardBody,
    ok: boardRecord,
    errors: [404, 409],
    errorText: { 404: 'NOT_FOUND: no such workspace.', 409: 'TOO_MANY_BOARDS: a new board past LEADERBOARD_MAX_BOARDS.' },
    description: 'Recorded in the audit list (`board.set-periods`, `board.follow`).',
  }),
  adminRoute('delete', BOARD, 'Delete a leaderboard: its config and every entry', {
    params: boardParam,
    ok: boardRemoval,
    errors: [400, 404],
    errorText: { 404: NO_BOARD },
  }),
  adminRoute('post', `${BOARD}/reset`, 'Reset a leaderboard: every period loses every entry; the config stays', {
    params: boardParam,
    ok: boardRemoval,
    errors: [400, 404],
    errorText: { 404: NO_BOARD },
  }),
  adminRoute('get', `${BOARD}/entries/:userId`, "One player's rank and score on a leaderboard, and the entries around", {
    params: boardParam,
    query: adminBoardRankQuery,
    ok: adminBoardRank,
    errors: [400, 404],
    errorText: { 404: `${NO_BOARD} PERIOD_NOT_KEPT: the board does not keep that period. PLAYER_NOT_FOUND: the player has no entry in that period.` },
  }),
  adminRoute('delete', `${BOARD}/entries/:userId`, 'Take one player off every period of a leaderboard', {
    params: boardParam,
    ok: boardEntryRemoval,
    errors: [400, 404],
    errorText: { 404: NO_BOARD },
  }),
];
