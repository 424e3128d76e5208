// The leaderboard routes of the public API (docs/leaderboards.md) as the OpenAPI document
// describes them.
import {
  boardDeleteResponse,
  boardPageQuery,
  boardPageResponse,
  boardParam,
  boardPlayerParams,
  boardPlayerQuery,
  boardPlayerResponse,
  boardScoreResponse,
  deleteScoreBody,
  incrementScoreBody,
  setScoreBody,
} from '../../schemas/leaderboards.js';
import { publicRoute, type RouteSpec } from '../route-spec.js';
import { idempotent } from './public.js';

const READ_404 = "PERIOD_NOT_KEPT: the board does not keep the period asked for (an operator sets a board's periods).";
const WRITE_409 =
  'TOO_MANY_BOARDS (a new board past LEADERBOARD_MAX_BOARDS), BOARD_FULL (a new player past LEADERBOARD_MAX_ENTRIES in a period), IDEMPOTENCY_IN_PROGRESS.';
const WRITE_403 = "The key's scope does not allow writes, STORAGE_QUOTA_EXCEEDED (the workspace is at its plan's storage quota), or the platform-only access gate refused the caller.";

export const leaderboardRoutes: readonly RouteSpec[] = [
  publicRoute('get', '/leaderboards/:board', 'A page of a leaderboard, best first, after a cursor', {
    description:
      'Entries of one period of the board in order, at most 100 a page. `next` is a cursor: an entry whose score does not change while a client pages is shown exactly once. A board not written yet is an empty page.',
    params: boardParam,
    query: boardPageQuery,
    ok: boardPageResponse,
    errors: [400, 404],
    errorText: { 404: READ_404 },
  }),
  publicRoute('get', '/leaderboards/:board/players/:userId', "A player's rank and score, and the entries around", {
    params: boardPlayerParams,
    query: boardPlayerQuery,
    ok: boardPlayerResponse,
    errors: [400, 404],
    errorText: { 404: `PLAYER_NOT_FOUND: the player is not on this period of the board; ${READ_404}` },
  }),
  publicRoute('post', '/leaderboards/:board/set', "Set a player's score in every period the board keeps", {
    params: boardParam,
    body: setScoreBody,
    ok: boardScoreResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 403: WRITE_403, 409: WRITE_409 },
  }),
  publicRoute('post', '/leaderboards/:board/increment', "Add to a player's score in every period the board keeps", {
    params: boardParam,
    body: incrementScoreBody,
    ok: boardScoreResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 403: WRITE_403, 409: `NUMBER_OUT_OF_RANGE (the result would not be a finite number), ${WRITE_409}` },
  }),
  publicRoute('post', '/leaderboards/:board/delete', 'Take a player off the board (every period)', {
    params: boardParam,
    body: deleteScoreBody,
    ok: boardDeleteResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: 'IDEMPOTENCY_IN_PROGRESS.' },
  }),
];
