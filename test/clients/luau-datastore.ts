// The backend of the platform's DataStoreService stand-in (luau/datastore.luau): the entries of
// the game's old data stores, shared by every Luau VM as the platform's stores are shared by
// every server of a game. It follows the documented behaviour that a migration depends on:
//   - values are kept as their JSON text (what the platform serializes), so a read gives a copy;
//   - a missing key reads as not found (GetAsync returns nil in Luau);
//   - a value's serialized length may be up to 4 MiB (4,194,304 bytes), beyond that the write
//     fails with "105: Serialized value exceeds 4MB limit."; key names are 1-50 characters
//     (101, 102), store names and scopes at most 50;
//   - failures are error strings "<code>: <message>", as the platform raises them.
// Tests inject failures and delays (`faults`) and read every call made (`calls`). Everything
// here is checked when the call reaches it, so a seed from the test obeys the same limits.

export const MAX_VALUE_BYTES = 4 * 1024 * 1024;
export const MAX_NAME_LENGTH = 50;
/** What the platform raises when its backend fails a request (a 5xx of its own). */
export const INTERNAL_ERROR = '502: API Services rejected request with error. HTTP 500 (Internal Server Error)';
/** What it raises when a request was throttled and its queue was full. */
export const GET_THROTTLED = '301: GetAsync request dropped. Request was throttled, but throttled request queue was full.';

export type DataStoreOp = 'GetAsync' | 'SetAsync' | 'RemoveAsync';

export interface DataStoreCall {
  readonly op: DataStoreOp;
  readonly store: string;
  readonly scope: string;
  readonly key: string;
  /** GetAsync only: whether the caller allowed a cached value (DataStoreGetOptions.UseCache). */
  readonly useCache?: boolean;
  /** GetAsync only: answered from the server's own cache, without reaching the backend. */
  readonly cached?: boolean;
  /** The error this call raised, if any. */
  readonly error?: string;
}

/**
 * One injected fault, used by the first call it matches (op, store, key: each only when given).
 * `error` makes the call raise it; `delaySeconds` makes it yield that long (virtual time) first.
 */
export interface DataStoreFault {
  op?: DataStoreOp;
  store?: string;
  key?: string;
  error?: string;
  delaySeconds?: number;
}

interface Entry {
  json: string;
  version: string;
  createdTime: number;
  updatedTime: number;
}

type Answer =
  | { error: string; delay?: number }
  | { found: false; delay?: number }
  | { found: true; json: string; version: string; createdTime: number; updatedTime: number; delay?: number };

export class DataStoreBackend {
  readonly calls: DataStoreCall[] = [];
  readonly faults: DataStoreFault[] = [];
  private readonly entries = new Map<string, Entry>();
  private writes = 0;

  /** Forgets every entry, call and fault (a new game). */
  reset(): void {
    this.entries.clear();
    this.calls.length = 0;
    this.faults.length = 0;
  }

  /** Writes a value as a server's SetAsync would (same limits); for a test's old data. */
  seed(store: string, key: string, value: unknown, scope = 'global'): void {
    const answer = this.set(store, scope, key, JSON.stringify(value));
    if ('error' in answer) throw new Error(answer.error);
  }

  /** The stored value, or undefined. */
  peek(store: string, key: string, scope = 'global'): unknown {
    const entry = this.entries.get(entryId(store, scope, key));
    return entry === undefined ? undefined : JSON.parse(entry.json);
  }

  /** The stored entry's version (DataStoreKeyInfo.Version), or undefined. */
  version(store: string, key: string, scope = 'global'): string | undefined {
    return this.entries.get(entryId(store, scope, key))?.version;
  }

  /** How many GetAsync calls were made for this key (cached ones included), by any server. */
  reads(store: string, key: string): number {
    return this.calls.filter((c) => c.op === 'GetAsync' && c.store === store && c.key === key).length;
  }

  /** The host function the Luau stand-in calls: one JSON answer per call. */
  handle(op: string, store: string, scope: string, key: string, arg: string): string {
    const problem = checkNames(store, scope, key);
    if (op === 'GetAsync' && arg === 'hit') {
      // The server's own cache answered: the backend never saw it, so no fault applies.
      this.calls.push({ op, store, scope, key, useCache: true, cached: true });
      return JSON.stringify({ found: false });
    }
    const fault = problem === undefined ? this.takeFault(op, store, key) : undefined;
    const error = problem ?? fault?.error;
    const delay = fault?.delaySeconds;
    const call: DataStoreCall =
      op === 'GetAsync' ? { op, store, scope, key, useCache: arg === 'cache', cached: false } : { op: op as DataStoreOp, store, scope, key };
    this.calls.push(error === undefined ? call : { ...call, error });
    let answer: Answer;
    if (error !== undefined) answer = { error };
    else if (op === 'GetAsync') answer = this.get(store, scope, key);
    else if (op === 'SetAsync') answer = this.set(store, scope, key, arg);
    else if (op === 'RemoveAsync') {
      answer = this.get(store, scope, key);
      this.entries.delete(entryId(store, scope, key));
    } else answer = { error: `unknown data store operation ${op}` };
    return JSON.stringify(delay === undefined ? answer : { ...answer, delay });
  }

  private takeFault(op: string, store: string, key: string): DataStoreFault | undefined {
    const i = this.faults.findIndex(
      (f) => (f.op === undefined || f.op === op) && (f.store === undefined || f.store === store) && (f.key === undefined || f.key === key),
    );
    return i < 0 ? undefined : this.faults.splice(i, 1)[0];
  }

  private get(store: string, scope: string, key: string): Answer {
    const entry = this.entries.get(entryId(store, scope, key));
    return entry === undefined ? { found: false } : { found: true, ...entry };
  }

  private set(store: string, scope: string, key: string, json: string): Answer {
    const problem = checkNames(store, scope, key);
    if (problem !== undefined) return { error: problem };
    if (Buffer.byteLength(json) > MAX_VALUE_BYTES) return { error: '105: Serialized value exceeds 4MB limit.' };
    const id = entryId(store, scope, key);
    const now = Date.now();
    const old = this.entries.get(id);
    this.writes++;
    const version = `${now.toString(16).toUpperCase().padStart(16, '0')}.${String(this.writes).padStart(10, '0')}`;
    const entry = { json, version, createdTime: old?.createdTime ?? now, updatedTime: now };
    this.entries.set(id, entry);
    return { found: true, ...entry };
  }
}

function entryId(store: string, scope: string, key: string): string {
  return JSON.stringify([store, scope, key]);
}

function checkNames(store: string, scope: string, key: string): string | undefined {
  if (store === '') return "DataStore name can't be empty.";
  if (store.length > MAX_NAME_LENGTH) return 'DataStore name exceeds the 50 character limit.';
  if (scope.length > MAX_NAME_LENGTH) return 'DataStore scope exceeds the 50 character limit.';
  if (key === '') return "101: Key name can't be empty.";
  if (key.length > MAX_NAME_LENGTH) return '102: Key name exceeds the 50 character limit.';
  return undefined;
}

/** The one backend every VM's stand-in reaches (one game's data stores). */
export const platformDataStores = new DataStoreBackend();
