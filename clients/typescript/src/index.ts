// The client's module-level API, the same seven functions as the Luau module: init() connects
// once (one ping), and the other functions use that connection. PlayerDataClient serves code
// that talks to more than one workspace.
import { PlayerDataClient, type ClientConfig, type UserId, type Value, type Workspace } from './client.js';
import type { Operation } from './errors.js';

export { PlayerDataClient } from './client.js';
export type { ClientConfig, JsonValue, UserId, Value, Workspace } from './client.js';
export { PlayerDataError, type Operation } from './errors.js';

let current: PlayerDataClient | undefined;

function connected(operation: Operation): PlayerDataClient {
  if (!current) throw new Error(`PlayerData.${operation}: call init({ baseUrl, apiKey }) first`);
  return current;
}

/** Checks the settings and key with one ping; throws PlayerDataError with the server's message. */
export async function init(config: ClientConfig): Promise<Workspace> {
  current = undefined;
  const { client, workspace } = await PlayerDataClient.connect(config);
  current = client;
  return workspace;
}

// Each function is async so that every failure, "not initialized" included, is a rejection.
export async function ping(): Promise<Workspace> {
  return connected('ping').ping();
}

/** The stored value, or undefined when the player or the key does not exist. */
export async function get<T extends Value = Value>(userId: UserId, key: string): Promise<T | undefined> {
  return connected('get').get<T>(userId, key);
}

/** Every key of the player with its value, or undefined when the player has no data. */
export async function getAll(userId: UserId): Promise<Record<string, Value> | undefined> {
  return connected('getAll').getAll(userId);
}

export async function set(userId: UserId, key: string, value: Value): Promise<void> {
  return connected('set').set(userId, key, value);
}

/** Adds amount (default 1) atomically, from defaultValue (default 0) for a new key; returns the new value. */
export async function increment(userId: UserId, key: string, amount?: number, defaultValue?: number): Promise<number> {
  return connected('increment').increment(userId, key, amount, defaultValue);
}

/** Deletes one key, or all of the player's data without a key; returns how many keys went. */
async function remove(userId: UserId, key?: string): Promise<number> {
  return connected('delete').delete(userId, key);
}
// `delete` is reserved as a declaration name but allowed as an export name.
export { remove as delete };
