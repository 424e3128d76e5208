// PlayerDataClient: one workspace's connection to the service. Owns the x-api-key header, JSON
// in and out, and the mapping of answers to a value, undefined (player or key missing) or a
// PlayerDataError. It never retries: a 429 means "call less often", and whether to retry
// anything else is the caller's decision.
import { PlayerDataError, type Operation } from './errors.js';

export type JsonValue = number | string | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** What the service stores: any JSON value except null at the top. */
export type Value = number | string | boolean | JsonValue[] | { [key: string]: JsonValue };
/** A player's id: 42 and "42" are the same player. */
export type UserId = number | string;

export interface ClientConfig {
  /** Base URL of the service, ending in /api/v1 (a trailing slash is ignored). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Gives up on a request after this long (default 10 000 ms); it then fails with status 0. */
  readonly timeoutMs?: number;
}

export interface Workspace {
  readonly workspaceId: string;
  readonly workspaceName: string;
  readonly plan: 'free' | 'pro';
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, any>;
  readonly headers: Headers;
}

function userIdText(operation: Operation, userId: UserId): string {
  if (typeof userId === 'string' && userId !== '') return userId;
  if (typeof userId === 'number' && Number.isSafeInteger(userId) && userId >= 0) return String(userId);
  throw new TypeError(
    `PlayerData.${operation}: userId must be a non-negative whole number or a non-empty string, got ${String(userId)}`,
  );
}

function checkKey(operation: Operation, key: unknown): string {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`PlayerData.${operation}: key must be a non-empty string, got ${String(key)}`);
  }
  return key;
}

// Only the service's own "not found" answers mean undefined; any other 404 (a wrong baseUrl,
// a proxy) throws, so a misconfiguration is never mistaken for a player without data.
function isMissing(answer: Answer): boolean {
  return answer.status === 404 && (answer.body.error === 'Key not found' || answer.body.error === 'Player not found');
}

export class PlayerDataClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;

  constructor(config: ClientConfig) {
    if (typeof config?.baseUrl !== 'string' || typeof config.apiKey !== 'string' || config.apiKey === '') {
      throw new TypeError('PlayerData: expects { baseUrl: string, apiKey: string }');
    }
    this.baseUrl = config.baseUrl.replace(/\/+$/, '');
    this.apiKey = config.apiKey;
    this.timeoutMs = config.timeoutMs ?? 10_000;
  }

  /** Creates a client and checks its settings and key with one ping. */
  static async connect(config: ClientConfig): Promise<{ client: PlayerDataClient; workspace: Workspace }> {
    const client = new PlayerDataClient(config);
    return { client, workspace: await client.pingAs('init') };
  }

  ping(): Promise<Workspace> {
    return this.pingAs('ping');
  }

  /** The stored value, or undefined when the player or the key does not exist. */
  async get<T extends Value = Value>(userId: UserId, key: string): Promise<T | undefined> {
    const query = new URLSearchParams({ userId: userIdText('get', userId), key: checkKey('get', key) });
    const answer = await this.send('get', 'GET', `/data?${query}`);
    if (isMissing(answer)) return undefined;
    return this.succeeded('get', answer).data.value as T;
  }

  /** Every key of the player with its value, or undefined when the player has no data. */
  async getAll(userId: UserId): Promise<Record<string, Value> | undefined> {
    const query = new URLSearchParams({ userId: userIdText('getAll', userId) });
    const answer = await this.send('getAll', 'GET', `/data?${query}`);
    if (isMissing(answer)) return undefined;
    return this.succeeded('getAll', answer).data as Record<string, Value>;
  }

  async set(userId: UserId, key: string, value: Value): Promise<void> {
    if (value === undefined || value === null) {
      throw new TypeError('PlayerData.set: value must not be undefined or null (use delete to remove a key)');
    }
    const body = { userId: userIdText('set', userId), key: checkKey('set', key), value };
    this.succeeded('set', await this.send('set', 'POST', '/data/set', body));
  }

  /**
   * Adds `amount` (default 1) atomically, starting from `defaultValue` (default 0) when the key
   * does not exist; returns the new value. A PlayerDataError with `retryable` may be retried.
   */
  async increment(userId: UserId, key: string, amount?: number, defaultValue?: number): Promise<number> {
    const body = { userId: userIdText('increment', userId), key: checkKey('increment', key), amount, defaultValue };
    return this.succeeded('increment', await this.send('increment', 'POST', '/data/increment', body)).value as number;
  }

  /** Deletes one key, or all of the player's data without a key; returns how many keys went. */
  async delete(userId: UserId, key?: string): Promise<number> {
    const body = { userId: userIdText('delete', userId), key: key === undefined ? undefined : checkKey('delete', key) };
    return this.succeeded('delete', await this.send('delete', 'POST', '/data/delete', body)).data.deleted as number;
  }

  private async pingAs(operation: 'init' | 'ping'): Promise<Workspace> {
    const body = this.succeeded(operation, await this.send(operation, 'GET', '/ping'));
    return { workspaceId: body.workspaceId, workspaceName: body.workspaceName, plan: body.plan };
  }

  private async send(operation: Operation, method: 'GET' | 'POST', path: string, payload?: object): Promise<Answer> {
    const headers: Record<string, string> = { 'x-api-key': this.apiKey };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers,
        body: payload === undefined ? undefined : JSON.stringify(payload),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const reason = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new PlayerDataError(operation, 0, reason, undefined, { cause: err });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (typeof body !== 'object' || body === null) {
      throw new PlayerDataError(operation, res.status, "the answer is not the service's JSON (is baseUrl right?)");
    }
    return { status: res.status, body: body as Record<string, any>, headers: res.headers };
  }

  /** The body of a successful answer; anything else becomes a PlayerDataError. */
  private succeeded(operation: Operation, answer: Answer): Record<string, any> {
    if (answer.status === 200 && answer.body.success === true) return answer.body;
    const message = typeof answer.body.error === 'string' ? answer.body.error : 'unexpected answer';
    const retryAfter = answer.status === 429 ? Number(answer.headers.get('retry-after') ?? NaN) : NaN;
    throw new PlayerDataError(operation, answer.status, message, Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
}
