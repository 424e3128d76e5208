// Two game servers in Luau VMs against one service, for the session layer's tests: a fresh
// workspace and reset VMs before each test, the requests each server sent, and the player as
// the service stores it.
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { call, newWorkspace, type ApiResponse, type useService } from '../support/service.js';
import { startLuauVm, type LuauVm, type RecordedRequest } from './luau-vm.js';

export const bodyOf = (r: RecordedRequest) => JSON.parse(r.body!);
const sentTo = (path: string) => (vm: LuauVm, from = 0) => vm.requests.slice(from).filter((r) => r.url.endsWith(path));
/** The requests `vm` sent to each endpoint, from its `from`-th request on. */
export const batchesOf = sentTo('/data/batch');
export const acquiresOf = sentTo('/sessions/acquire');
export const releasesOf = sentTo('/sessions/release');

export interface LuauServers {
  /** The workspace of the test under way. */
  readonly ws: CreatedWorkspace;
  /** Server A (VM slot 0) and server B (slot 1), reset before each test. */
  readonly a: LuauVm;
  readonly b: LuauVm;
  /** The player's values as the service stores them; undefined for a player never written. */
  stored(userId: number): Promise<any>;
  /** Writes one key of a player through the public API, as data from before the test. */
  seed(userId: number, key: string, value: unknown): Promise<ApiResponse>;
}

/** Registers the hooks: the VMs once for the describe block, a new workspace and reset VMs before each test. */
export function useLuauServers(t: ReturnType<typeof useService>): LuauServers {
  let ws: CreatedWorkspace | undefined;
  let a: LuauVm | undefined;
  let b: LuauVm | undefined;
  before(async () => {
    a = await startLuauVm(0);
    b = await startLuauVm(1);
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    await a!.reset();
    await b!.reset();
  });
  const servers: LuauServers = {
    get ws() {
      return ws!;
    },
    get a() {
      return a!;
    },
    get b() {
      return b!;
    },
    async stored(userId) {
      const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: servers.ws.apiKey });
      return res.status === 404 ? undefined : res.body.data;
    },
    seed: (userId, key, value) => call(t.service, 'POST', '/data/set', { key: servers.ws.apiKey, body: { userId, key, value } }),
  };
  return servers;
}
