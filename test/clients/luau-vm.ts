// Runs the Luau PlayerData module exactly as shipped (clients/luau/src/init.luau) in a real Luau
// VM (luau-web, WebAssembly), with the platform stand-in of luau/platform.luau. The stand-in's
// RequestAsync reaches the host's __fetch below, which makes a real HTTP request; only strings,
// numbers and booleans cross between Luau and JavaScript (and never a raw NUL: luau-web ends a
// string there; JSON text carries it escaped, so requests and answers are unaffected).
// One VM serves many tests: luau-web 1.4.0 cannot create a working state after one was
// destroyed ("attempt to call a nil value"), so states are never destroyed, only reused.
import { readFileSync } from 'node:fs';
import type { LuauEnv } from 'luau-web';

const here = new URL('.', import.meta.url);
const source = (path: string) => readFileSync(new URL(path, here), 'utf8');
const MODULE_SOURCE = source('../../clients/luau/src/init.luau');
const JSON_SOURCE = source('luau/json.luau');
const PLATFORM_SOURCE = source('luau/platform.luau');

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

export interface LuauVm {
  /** Every HTTP request the module made, in order. */
  readonly requests: RecordedRequest[];
  /** Runs a chunk (PlayerData and JSON are globals); `args` arrive as `...`. */
  run(code: string, ...args: Array<string | number | boolean>): Promise<unknown[]>;
  /** Fresh platform globals and a fresh copy of the module (as a new server would have); forgets recorded requests. */
  reset(): Promise<void>;
}

async function hostFetch(
  requests: RecordedRequest[],
  url: string,
  method: string,
  headersJson: string,
  body: string,
  hasBody: boolean,
): Promise<string> {
  const parsed: unknown = JSON.parse(headersJson);
  const headers = Array.isArray(parsed) ? {} : (parsed as Record<string, string>);
  requests.push({ method, url, headers, body: hasBody ? body : undefined });
  try {
    const res = await fetch(url, { method, headers, body: hasBody ? body : undefined });
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

export async function startLuauVm(): Promise<LuauVm> {
  // Imported lazily: luau-web has a top-level await, and a test file whose static imports
  // contain one is loaded by mocha through import() instead of require(), which would give it
  // a second copy of test/support/hooks.ts (without the test Redis).
  const { LuauState } = await import('luau-web');
  const requests: RecordedRequest[] = [];
  const env = {
    __fetch: (...a: Parameters<typeof hostFetch> extends [unknown, ...infer R] ? R : never) => hostFetch(requests, ...a),
    __sleep: (seconds: number) => new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000)),
  };
  const state = await LuauState.createAsync(env as unknown as LuauEnv);
  const [json] = (await state.loadstring(JSON_SOURCE, 'json.luau', true)()) as unknown[];
  state.env.set('JSON', json, true);

  let chunks = 0;
  const vm: LuauVm = {
    requests,
    async run(code, ...args) {
      const chunk = state.loadstring(code, `test-${++chunks}`, true);
      return (await chunk(...args)) as unknown[];
    },
    async reset() {
      await state.loadstring(PLATFORM_SOURCE, 'platform.luau', true)();
      const [playerData] = (await state.loadstring(MODULE_SOURCE, 'PlayerData', true)()) as unknown[];
      state.env.set('PlayerData', playerData, true);
      requests.length = 0;
    },
  };
  await vm.reset();
  return vm;
}
