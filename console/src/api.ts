// The console's only way to the service: /console/session for the session, /admin/v1 for
// everything else. The CSRF token lives in this module's memory only (never localStorage); the
// session itself is an HttpOnly cookie the page cannot read.
let csrfToken = '';
let onSignedOut: () => void = () => {};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly body: Record<string, unknown> | undefined,
  ) {
    super(message);
  }

  /** The message in words with its code, for the page. */
  describe(): string {
    return `${this.message} (${this.code ?? 'HTTP'} ${this.status})`;
  }
}

export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

/** A body sent as it is (a file), with its media type, instead of JSON. */
class RawBody {
  constructor(
    readonly raw: Blob,
    readonly type: string,
  ) {}
}

async function send(method: string, url: string, body?: unknown): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const raw = body instanceof RawBody ? body : undefined;
  if (body !== undefined) headers['content-type'] = raw ? raw.type : 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    const payload = raw ? { body: raw.raw } : body === undefined ? {} : { body: JSON.stringify(body) };
    res = await fetch(url, { method, headers, credentials: 'same-origin', ...payload });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service did not answer', undefined);
  }
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = (await res.json()) as Record<string, unknown>;
  } catch {
    parsed = undefined;
  }
  if (!res.ok || parsed?.['success'] !== true) {
    const message = typeof parsed?.['error'] === 'string' ? parsed['error'] : res.statusText || 'Request failed';
    const code = typeof parsed?.['code'] === 'string' ? parsed['code'] : undefined;
    const error = new ApiError(res.status, code, message, parsed);
    if (res.status === 401 && !url.endsWith('/console/session')) onSignedOut();
    throw error;
  }
  return parsed;
}

interface SessionAnswer {
  csrfToken: string;
  idleSeconds: number;
  actor: string;
}

export async function resumeSession(): Promise<SessionAnswer | undefined> {
  try {
    const answer = (await send('GET', '/console/session'))['data'] as SessionAnswer;
    csrfToken = answer.csrfToken;
    return answer;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return undefined;
    throw err;
  }
}

export async function signIn(token: string): Promise<SessionAnswer> {
  const answer = (await send('POST', '/console/session', { token }))['data'] as SessionAnswer;
  csrfToken = answer.csrfToken;
  return answer;
}

export async function signOut(): Promise<void> {
  try {
    await send('DELETE', '/console/session');
  } finally {
    csrfToken = '';
  }
}

/** An admin API call; `path` is relative to /admin/v1. Answers the whole envelope. */
export function admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  return send(method, `/admin/v1${path}`, body);
}

/** The `data` of an admin answer. */
export async function adminData<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await admin(method, path, body))['data'] as T;
}

/** Uploads a file (the browser streams it) to an admin path; answers the `data`. */
export async function adminUpload<T>(path: string, file: Blob, type: string): Promise<T> {
  return (await send('POST', `/admin/v1${path}`, new RawBody(file, type)))['data'] as T;
}

export const enc = encodeURIComponent;
