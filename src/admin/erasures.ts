// Operators' side of the right to erasure, shared by the CLI, the admin API and the console:
// erase a player in one workspace or in all of them, follow a job, list jobs and the counts,
// dismiss a request for games no workspace will serve, and map the platform's games to
// workspaces (a mapping re-queues the requests that waited for it).
import { createLogger } from '../logger.js';
import {
  normalizeGameId,
  PLAYER_NAME_TEMPLATES_MAX,
  templateProblem,
  templatesOverlap,
  USER_ID_PLACEHOLDER,
  userDigest,
  type ErasureSource,
  type ErasureState,
} from '../domain/erasure.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { decodeJob, viewOf, type ErasureJobView } from '../erasure/job-record.js';
import { playerPlaces, type PlayerPlace } from '../erasure/places.js';
import { ErasureRequests, requireDigestSecret } from '../erasure/requests.js';
import { ErasureWorker } from '../erasure/worker.js';
import type { AuditLogStore } from '../store/installation/audit-log.js';
import type { ErasureCounts } from '../store/installation/erasure-jobs.js';
import { GameMap } from '../store/installation/game-map.js';
import { ErasurePlayerNames } from '../store/workspaces/erasure-names.js';
import type { Config } from '../config.js';
import type { AdminContext } from './context.js';
import { parsePositiveInt, parseUserId } from './inputs.js';

export const ERASURE_LIST_DEFAULT = 50;
export const ERASURE_LIST_MAX = 500;
export const GAMES_MAX = 1000;
/** Job ids read at a time while listing. */
const LIST_PAGE = 200;
/** How often a CLI waiting on a job another worker runs reads its progress. */
const WATCH_MS = 250;

export interface EraseInput {
  readonly userId: string | number;
  readonly workspaceId?: string | undefined;
  readonly allWorkspaces?: boolean | undefined;
}

export interface ErasureList {
  readonly counts: ErasureCounts;
  readonly jobs: ErasureJobView[];
}

export interface WorkspaceGames {
  readonly workspaceId: string;
  readonly gameIds: string[];
  /** Erasure jobs that waited for one of these games and run again now. */
  readonly requeued: string[];
}

export interface WorkspaceErasurePlayers {
  readonly workspaceId: string;
  /** Templates such as `Player_{userId}`: the players an erasure of a user id also erases in the workspace. */
  readonly templates: string[];
}

/**
 * The game ids a workspace is to serve, checked and normalized (no duplicates), or 400: the
 * admin op's check, which a restore (admin/installation-backup.ts) runs too before it writes.
 */
export function parseGameIds(rawGameIds: ReadonlyArray<string | number>): string[] {
  if (rawGameIds.length > GAMES_MAX) throw badRequest(`At most ${GAMES_MAX} games a workspace`);
  return [...new Set(rawGameIds.map((raw) => {
    const id = normalizeGameId(typeof raw === 'string' ? raw.trim() : raw);
    if (id === undefined) throw badRequest(`Game id must be a positive whole number (the platform's universe id), got ${JSON.stringify(raw)}`);
    return id;
  }))];
}

/**
 * A workspace's erasure player names, checked, each kept once and `{userId}` alone dropped, or
 * 400: the admin op's check, which a restore runs too before it writes.
 */
export function parseErasurePlayerNames(rawTemplates: readonly string[]): string[] {
  if (rawTemplates.length > PLAYER_NAME_TEMPLATES_MAX) throw badRequest(`At most ${PLAYER_NAME_TEMPLATES_MAX} erasure player names a workspace`);
  for (const template of rawTemplates) {
    if (typeof template !== 'string') throw badRequest(`An erasure player name is a text such as "Player_${USER_ID_PLACEHOLDER}", got ${JSON.stringify(template)}`);
    const problem = templateProblem(template);
    if (problem !== undefined) throw badRequest(`Erasure player name ${JSON.stringify(template.slice(0, 120))} ${problem}`);
  }
  const templates = [...new Set(rawTemplates)];
  // With the user id's own player ({userId}), which every erasure erases.
  const all = [USER_ID_PLACEHOLDER, ...templates.filter((t) => t !== USER_ID_PLACEHOLDER)];
  for (const [i, first] of all.entries()) {
    for (const second of all.slice(i + 1)) {
      if (templatesOverlap(first, second)) {
        throw badRequest(`Erasure player names ${JSON.stringify(first)} and ${JSON.stringify(second)} can name one player for two users, so an erasure of one would erase the other's (P${USER_ID_PLACEHOLDER} and P1${USER_ID_PLACEHOLDER} both name P12): end each with ${USER_ID_PLACEHOLDER} after a character that is not a digit`);
      }
    }
  }
  return all.slice(1);
}

/** Who asks, from the actor the operations act as. */
function sourceOf(actor: string): ErasureSource {
  if (actor === 'console') return 'console';
  if (actor === 'admin-api') return 'admin-api';
  return 'cli';
}

export class ErasureOperations {
  private readonly requests: ErasureRequests;
  private readonly games: GameMap;
  private readonly playerNames: ErasurePlayerNames;

  constructor(
    private readonly ctx: AdminContext & { readonly erasure: Config['erasure'] },
    private readonly audit: AuditLogStore,
    /** Places a player lives besides its slot; the installation's by default (erasure/places.ts). */
    private readonly places: readonly PlayerPlace[] = playerPlaces(ctx.redis, ctx.boards),
  ) {
    this.requests = new ErasureRequests(ctx.redis, ctx.erasure, audit, () => ctx.nowMs());
    this.games = new GameMap(ctx.redis);
    this.playerNames = new ErasurePlayerNames(ctx.redis);
  }

  /** Records the erasure of a player; a worker runs it (a service instance, or `run` in this process). */
  async request(input: EraseInput): Promise<ErasureJobView> {
    const userId = parseUserId(input.userId);
    const all = input.allWorkspaces === true;
    if (all === (input.workspaceId !== undefined)) throw badRequest('Name one workspace (workspaceId), or every workspace (allWorkspaces: true)');
    if (!all) await this.ctx.requireWorkspace(input.workspaceId!);
    const recorded = await this.requests.request({
      userId,
      scope: all ? { kind: 'all-workspaces' } : { kind: 'workspace', workspaceId: input.workspaceId! },
      source: sourceOf(this.ctx.actor),
      actor: this.ctx.actor,
    });
    return recorded.job!;
  }

  /**
   * Runs a job in this process (the CLI), or follows it while another worker runs it, until it
   * is done, unmapped or its attempt failed; `onProgress` sees the job as it goes.
   */
  async run(jobId: string, onProgress?: (job: ErasureJobView) => void): Promise<ErasureJobView> {
    const secret = await requireDigestSecret(this.ctx.redis, this.ctx.erasure, 'An erasure');
    const worker = new ErasureWorker({
      redis: this.ctx.redis,
      config: this.ctx.erasure,
      secret,
      logger: createLogger({ logLevel: 'silent', nodeEnv: 'production' }),
      places: this.places,
      audit: this.audit,
      nowMs: () => this.ctx.nowMs(),
    });
    const watcher = setInterval(() => void this.show(jobId).then(onProgress, () => undefined), WATCH_MS);
    try {
      for (;;) {
        const outcome = await worker.runJob(jobId);
        const job = await this.show(jobId);
        if (outcome !== 'busy' && outcome !== 'not-due') return job;
        if (job.state !== 'pending') return job;
        await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
      }
    } finally {
      clearInterval(watcher);
    }
  }

  async show(jobId: string): Promise<ErasureJobView> {
    const fields = /^er_[\w-]{1,40}$/.test(jobId) ? await this.requests.jobs.get(jobId) : undefined;
    if (!fields) throw notFound(`Erasure job ${jobId} not found`);
    return viewOf(decodeJob(fields));
  }

  /** The counts, and the newest jobs (of one state, or of one user given by id, when asked). */
  async list(options: { state?: string | undefined; userId?: string | number | undefined; limit?: string | number | undefined } = {}): Promise<ErasureList> {
    const limit = parsePositiveInt(options.limit ?? ERASURE_LIST_DEFAULT, 'limit', ERASURE_LIST_MAX);
    const state = options.state as ErasureState | undefined;
    if (state !== undefined && !['pending', 'failed', 'unmapped', 'done'].includes(state)) {
      throw badRequest('state must be one of pending, failed, unmapped, done');
    }
    const user =
      options.userId === undefined ? undefined : userDigest(await requireDigestSecret(this.ctx.redis, this.ctx.erasure, 'Finding a user\'s erasures'), parseUserId(options.userId));
    const wanted = (job: ErasureJobView) => (state === undefined || job.state === state) && (user === undefined || job.user === user);
    const jobs: ErasureJobView[] = [];
    const seen = new Set<string>();
    const take = async (ids: string[]) => {
      for (const id of ids) {
        if (seen.has(id)) continue;
        seen.add(id);
        const fields = await this.requests.jobs.get(id);
        if (!fields) continue;
        const job = viewOf(decodeJob(fields));
        if (wanted(job)) jobs.push(job);
        if (jobs.length === limit) break;
      }
    };
    if (state !== undefined && state !== 'done') {
      await take(await this.requests.jobs.openIds());
      jobs.sort((a, b) => b.requestedAt.localeCompare(a.requestedAt));
    } else {
      // Newest first, a page at a time, until enough match (the listing holds the retention's jobs).
      for (let offset = 0; jobs.length < limit; offset += LIST_PAGE) {
        const ids = await this.requests.jobs.listIds(offset, LIST_PAGE);
        await take(ids);
        if (ids.length < LIST_PAGE) break;
      }
    }
    return { counts: await this.requests.jobs.counts(), jobs: jobs.slice(0, limit) };
  }

  /**
   * Ends a job that waits for games no workspace will serve: its user id is dropped, and it is
   * done. The workspaces it could reach were erased already.
   */
  async dismiss(jobId: string): Promise<ErasureJobView> {
    const job = await this.show(jobId);
    if (job.state !== 'unmapped') throw conflict(`Erasure job ${jobId} is ${job.state}: only a job waiting for a game's mapping (unmapped) can be dismissed`);
    await this.requests.jobs.transition(jobId, 'done', {
      keepMs: this.ctx.erasure.tombstoneMs,
      fields: { dismissedBy: this.ctx.actor, doneAtMs: String(this.ctx.nowMs()) },
    });
    await this.ctx.audit('erasure.dismiss', `erasure:${jobId}`, { details: { user: job.user, unmappedGames: job.unmappedGames.join(',') } });
    return this.show(jobId);
  }

  async gamesOf(workspaceId: string): Promise<WorkspaceGames> {
    await this.ctx.requireWorkspace(workspaceId);
    return { workspaceId, gameIds: await this.games.of(workspaceId), requeued: [] };
  }

  /** Makes the workspace serve exactly these games; jobs that waited for one of them run again. */
  async setGames(workspaceId: string, rawGameIds: ReadonlyArray<string | number>): Promise<WorkspaceGames> {
    await this.ctx.requireWorkspace(workspaceId);
    const gameIds = parseGameIds(rawGameIds);
    const result = await this.games.set(workspaceId, gameIds);
    if (!result.ok) throw conflict(`Game ${result.gameId} is served by workspace ${result.servedBy}: remove it there first`);
    const requeued: string[] = [];
    const mapped = new Set(gameIds);
    for (const jobId of await this.requests.jobs.unmappedIds()) {
      const fields = await this.requests.jobs.get(jobId);
      const waitsFor = fields ? (JSON.parse(fields['unmappedGames'] ?? '[]') as string[]) : [];
      if (!waitsFor.some((game) => mapped.has(game))) continue;
      if (await this.requests.jobs.transition(jobId, 'requeue', { keepMs: this.ctx.erasure.tombstoneMs })) requeued.push(jobId);
    }
    await this.ctx.audit('workspace.set-games', `workspace:${workspaceId}`, {
      workspaceId,
      details: { games: gameIds.join(','), added: result.added, removed: result.removed, requeued: requeued.length },
    });
    return { workspaceId, gameIds: await this.games.of(workspaceId), requeued };
  }

  async erasurePlayersOf(workspaceId: string): Promise<WorkspaceErasurePlayers> {
    await this.ctx.requireWorkspace(workspaceId);
    return { workspaceId, templates: await this.playerNames.of(workspaceId) };
  }

  /**
   * Sets the workspace's erasure player names (none clears them): an erasure of a user id then
   * erases, besides the player of that id, the player each template names (`Player_{userId}`:
   * user 42's `Player_42`). A template repeated, or `{userId}` alone (that player is erased
   * anyway), is kept once or dropped. Jobs running already use the templates from their next
   * attempt.
   */
  async setErasurePlayers(workspaceId: string, rawTemplates: readonly string[]): Promise<WorkspaceErasurePlayers> {
    await this.ctx.requireWorkspace(workspaceId);
    const templates = parseErasurePlayerNames(rawTemplates);
    await this.playerNames.set(workspaceId, templates);
    await this.ctx.audit('workspace.set-erasure-players', `workspace:${workspaceId}`, {
      workspaceId,
      details: { templates: templates.join(' ') },
    });
    return { workspaceId, templates };
  }
}
