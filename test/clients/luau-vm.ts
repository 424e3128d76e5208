// Runs the Luau PlayerData module exactly as shipped (clients/luau/src/init.luau) in a real Luau
// VM (luau-web, WebAssembly), with the platform stand-in of luau/platform.luau (and its
// DataStoreService, luau/datastore.luau, whose entries live in luau-datastore.ts). The stand-in's
// RequestAsync reaches the host's __fetch below, which makes a real HTTP request; only strings,
// numbers and booleans cross between Luau and JavaScript (and never a raw NUL: luau-web ends a
// string there; JSON text carries it escaped, so requests and answers are unaffected).
// One VM serves many tests: luau-web 1.4.0 cannot create a working state after one was
// destroyed ("attempt to call a nil value"), so states are never destroyed, only reused
// (startLuauVm hands out shared VMs by slot).
import { readFileSync } from 'node:fs';
import type { LuauEnv } from 'luau-web';
import { platformDataStores } from './luau-datastore.js';

const here = new URL('.', import.meta.url);
const source = (path: string) => readFileSync(new URL(path, here), 'utf8');
const MODULE_SOURCE = source('../../clients/luau/src/init.luau');
/** init.luau's child ModuleScript (clients/luau/default.project.json maps src/ as one tree). */
const LEADERBOARD_SOURCE = source('../../clients/luau/src/Leaderboard.luau');
/** init.luau's child Mock, the in-memory service of init({ mock = true }). */
const MOCK_SOURCE = source('../../clients/luau/src/Mock.luau');
/** init.luau's children DataStoreService and ProfileStore, the drop-in facades. */
const DATASTORE_FACADE_SOURCE = source('../../clients/luau/src/DataStoreService.luau');
const PROFILESTORE_SOURCE = source('../../clients/luau/src/ProfileStore.luau');
const JSON_SOURCE = source('luau/json.luau');
const PLATFORM_SOURCE = source('luau/platform.luau');
const DATASTORE_SOURCE = source('luau/datastore.luau');

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

/**
 * What the network does to the next requests, one entry per request: `connect-fail` never
 * reaches the service; `drop-answer` reaches it, and its answer is lost on the way back (a
 * timeout after the write was applied). Both raise in RequestAsync as the platform's do.
 */
export type Fault = 'connect-fail' | 'drop-answer';

export interface LuauVm {
  /** Every HTTP request the module made, in order (faulty ones included). */
  readonly requests: RecordedRequest[];
  /** Faults for the next requests, taken in order; empty means a working network. */
  readonly faults: Fault[];
  /** Called (and awaited) whenever the stand-in's virtual clock moves forward, with the step. */
  onClock: ((seconds: number) => Promise<void> | void) | undefined;
  /** Runs a chunk (PlayerData and JSON are globals); `args` arrive as `...`. */
  run(code: string, ...args: Array<string | number | boolean>): Promise<unknown[]>;
  /** Fresh platform globals and a fresh copy of the module (as a new server would have); forgets recorded requests and faults. */
  reset(): Promise<void>;
}

async function hostFetch(
  requests: RecordedRequest[],
  faults: Fault[],
  url: string,
  method: string,
  headersJson: string,
  body: string,
  hasBody: boolean,
): Promise<string> {
  const parsed: unknown = JSON.parse(headersJson);
  const headers = Array.isArray(parsed) ? {} : (parsed as Record<string, string>);
  requests.push({ method, url, headers, body: hasBody ? body : undefined });
  const fault = faults.shift();
  if (fault === 'connect-fail') return JSON.stringify({ error: 'ConnectFail (fault injected)' });
  try {
    const res = await fetch(url, { method, headers, body: hasBody ? body : undefined });
    if (fault === 'drop-answer') {
      await res.arrayBuffer();
      return JSON.stringify({ error: 'Timedout (answer lost, fault injected)' });
    }
    return JSON.stringify({
      status: res.status,
      statusText: res.statusText,
      headers: Object.fromEntries(res.headers),
      body: await res.text(),
    });
  } catch (err) {
    return JSON.stringify({ error: `ConnectFail (${(err as Error).message})` });
  }
}

/**
 * The VM of a slot, created on first use and shared by every test file after that: luau-web 1.4.0
 * gives all its states one heap of about 17 MB that cannot grow, and cannot destroy a state, so
 * tests reuse a few VMs (two servers need slots 0 and 1) and reset() them before use.
 */
export function startLuauVm(slot = 0): Promise<LuauVm> {
  let vm = pool.get(slot);
  if (vm === undefined) {
    vm = createLuauVm();
    pool.set(slot, vm);
  }
  return vm;
}

const pool = new Map<number, Promise<LuauVm>>();

async function createLuauVm(): Promise<LuauVm> {
  // Imported lazily: luau-web has a top-level await, and a test file whose static imports
  // contain one is loaded by mocha through import() instead of require(), which would give it
  // a second copy of test/support/hooks.ts (without the test Redis).
  const { LuauState } = await import('luau-web');
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const env = {
    __fetch: (...a: Parameters<typeof hostFetch> extends [unknown, unknown, ...infer R] ? R : never) =>
      hostFetch(requests, faults, ...a),
    // Seeds the stand-in's math.random: every VM (server) must make its own GUIDs and JobId.
    __seed: () => Math.floor(Math.random() * 2 ** 31),
    __clockMoved: async (seconds: number) => {
      await vm.onClock?.(seconds);
    },
    // The DataStoreService stand-in's backend: one for every VM, as a game's servers share it.
    __datastore: (op: string, store: string, scope: string, key: string, arg: string) =>
      platformDataStores.handle(op, store, scope, key, arg),
  };
  const state = await LuauState.createAsync(env as unknown as LuauEnv);
  const [json] = (await state.loadstring(JSON_SOURCE, 'json.luau', true)()) as unknown[];
  state.env.set('JSON', json, true);

  // Compiled once: every chunk compiled stays in the VM's fixed heap for good (luau-web keeps a
  // reference to it), so reset() runs these again instead of compiling them each time.
  const platform = state.loadstring(PLATFORM_SOURCE, 'platform.luau', true);
  const dataStores = state.loadstring(DATASTORE_SOURCE, 'datastore.luau', true);
  const playerDataModule = state.loadstring(MODULE_SOURCE, 'PlayerData', true);
  const leaderboardModule = state.loadstring(LEADERBOARD_SOURCE, 'Leaderboard', true);
  const mockModule = state.loadstring(MOCK_SOURCE, 'Mock', true);
  const dataStoreFacadeModule = state.loadstring(DATASTORE_FACADE_SOURCE, 'DataStoreService', true);
  const profileStoreModule = state.loadstring(PROFILESTORE_SOURCE, 'ProfileStore', true);
  let chunks = 0;
  const compiled = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  const vm: LuauVm = {
    requests,
    faults,
    onClock: undefined,
    async run(code, ...args) {
      // The same code (a test's step run many times) is compiled once, for the same reason.
      let chunk = compiled.get(code);
      if (chunk === undefined) {
        chunk = state.loadstring(code, `test-${++chunks}`, true);
        compiled.set(code, chunk);
      }
      return (await chunk(...args)) as unknown[];
    },
    async reset() {
      await platform();
      await dataStores();
      const [leaderboard] = (await leaderboardModule()) as unknown[];
      state.env.set('LEADERBOARD_MODULE', leaderboard, true);
      const [mock] = (await mockModule()) as unknown[];
      state.env.set('MOCK_MODULE', mock, true);
      const [dataStoreFacade] = (await dataStoreFacadeModule()) as unknown[];
      state.env.set('DATASTORE_FACADE_MODULE', dataStoreFacade, true);
      const [profileStore] = (await profileStoreModule()) as unknown[];
      state.env.set('PROFILESTORE_MODULE', profileStore, true);
      // A second instance of the module, for require(PlayerData:Clone()) (ProfileStore's Mock).
      const [clone] = (await playerDataModule()) as unknown[];
      state.env.set('PLAYERDATA_CLONE', clone, true);
      const [playerData] = (await playerDataModule()) as unknown[];
      state.env.set('PlayerData', playerData, true);
      requests.length = 0;
      faults.length = 0;
      vm.onClock = undefined;
    },
  };
  await vm.reset();
  return vm;
}
