// How an answer becomes what a call returns: the body of a success, or the PlayerDataError an
// unsuccessful answer stands for. Shared by the player calls (client.ts) and the leaderboard
// calls (leaderboard.ts).
import { PlayerDataError, type Operation } from './errors.js';
import { retryAfterSeconds, type Answer } from './transport.js';

export type Body = Record<string, any>;

/** The error an unsuccessful answer (or one failed player of a multi-player batch) stands for. */
export function errorOf(operation: Operation, status: number, body: Body, attempts: number, retryAfter?: number): PlayerDataError {
  const message = typeof body['error'] === 'string' ? body['error'] : 'unexpected answer';
  return new PlayerDataError(operation, status, message, retryAfter, {
    code: typeof body['code'] === 'string' ? body['code'] : undefined,
    version: typeof body['version'] === 'number' ? body['version'] : undefined,
    data: body['data'],
    attempts,
  });
}

function bodyOf(operation: Operation, answer: Answer): Body {
  if (answer.body !== undefined) return answer.body;
  throw new PlayerDataError(operation, answer.status, "the answer is not the service's JSON (is baseUrl right?)", undefined, {
    code: 'INVALID_ANSWER',
    attempts: answer.attempts,
  });
}

/** The body of a successful answer; anything else becomes a PlayerDataError. */
export function succeeded(operation: Operation, answer: Answer): Body {
  const body = bodyOf(operation, answer);
  if (answer.status === 200 && body['success'] === true) return body;
  const retryAfter = answer.status === 429 ? retryAfterSeconds(answer) : undefined;
  throw errorOf(operation, answer.status, body, answer.attempts, retryAfter);
}

// Only the service's own codes mean "no such player or key"; any other 404 (a wrong baseUrl, a
// proxy) throws, so a misconfiguration is never mistaken for a player without data.
export function isMissing(operation: Operation, answer: Answer): boolean {
  const code = bodyOf(operation, answer)['code'];
  return answer.status === 404 && (code === 'PLAYER_NOT_FOUND' || code === 'KEY_NOT_FOUND');
}
