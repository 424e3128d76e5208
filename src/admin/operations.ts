// Every administrative operation, in one place, so the command line and the admin HTTP API
// cannot drift apart. Each operation validates its input, writes through the stores, publishes
// the cache invalidation that makes the change visible on every instance at once, and leaves
// an entry in the audit trail naming who did it. The larger operations live in their own
// modules (key-lifecycle, workspace-deletion, usage-report, player-support).
import { generateWorkspaceId } from '../domain/api-key.js';
import { isWorkspaceId } from '../domain/ids.js';
import type { Plan, Workspace } from '../domain/types.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { ApiKeyStore } from '../store/workspaces/api-keys.js';
import { AuditLogStore, type AuditEntry } from '../store/installation/audit-log.js';
import { publishEvent } from '../store/redis/events.js';
import { KeyUsageStore } from '../store/workspaces/key-usage.js';
import { loadConfig, type Config } from '../config.js';
import { PlayerDataStore, playerLimitsOf } from '../store/players/player-data.js';
import { addToStorageTotals, readStorageTotals, type StorageTotals } from '../store/workspaces/storage-usage.js';
import { percentOfQuota } from '../saves/quota-warnings.js';
import { dataBytesOf, quotaBytesOf } from '../saves/storage-quota.js';
import { estimatedRedisBytes } from '../store/players/redis-memory.js';
import { FollowedWrites } from '../boards/followed-writes.js';
import type { RedisClient } from '../store/redis/redis.js';
import { ensureScripts } from '../store/redis/scripts.js';
import { WorkspaceStore } from '../store/workspaces/workspaces.js';
import { currentActor } from './acting-as.js';
import { BanOperations } from './bans.js';
import { ErasureOperations } from './erasures.js';
import { BoardOperations } from './leaderboards.js';
import { MessageOperations } from './player-messages.js';
import { PlayerMessagesStore } from '../store/players/player-messages.js';
import { BoardRegistry } from '../store/boards/board-registry.js';
import { LeaderboardStore } from '../store/boards/leaderboard-store.js';
import type { AdminContext, AuditFacts } from './context.js';
import { parseName, parsePlan, parsePositiveInt } from './inputs.js';
import * as keyLifecycle from './key-lifecycle.js';
import * as playerHistory from './player-history.js';
import * as playerList from './player-list.js';
import * as playerSearch from './player-search.js';
import * as installationOverview from './overview.js';
import * as playerSupport from './player-support.js';
import * as backup from './installation-backup.js';
import * as transfer from './workspace-transfer.js';
import { usageReport, USAGE_DAYS_DEFAULT, type UsageReport } from './usage-report.js';
import { readAudit, type AuditQuery } from './audit-query.js';
import { deleteWorkspace, type DeletedWorkspace, type DeletionOptions } from './workspace-deletion.js';

export { parsePlan } from './inputs.js';
export type { CreatedKey, KeyOptions, KeyView, RotateOptions, RotatedKey } from './key-lifecycle.js';
export type { DeletedWorkspace, DeletionOptions } from './workspace-deletion.js';
export type { UsageReport } from './usage-report.js';
export type { PlayerList, PlayerListQuery, PlayerListRow } from './player-list.js';
export type { Overview } from './overview.js';
export type { AuditQuery } from './audit-query.js';
export type { HistoryVersion, PlayerAtVersion, PlayerHistory, RestoredPlayer } from './player-history.js';
export type { InstallationImport, Manifest } from './installation-backup.js';
export type { ErasureList, WorkspaceGames } from './erasures.js';
export type { ImportOptions, ImportSource, ImportSummary, WorkspaceExport } from './workspace-transfer.js';

export interface CreatedWorkspace {
  readonly workspaceId: string;
  readonly name: string;
  readonly plan: Plan;
  readonly keyId: string;
  /** The raw key of the workspace's first key: shown once and never stored. */
  readonly apiKey: string;
}

export interface WorkspaceDetails extends Workspace {
  readonly keys: keyLifecycle.KeyView[];
  /** What the workspace stores, and its plan's quota (saves/storage-quota.ts). */
  readonly storage: StorageTotals & { readonly quotaBytes: number; readonly quotaUsedBytes: number; readonly quotaPercent: number; readonly dataRedisBytes: number };
}

export interface AdminOptions {
  /** Who acts, for the audit trail: `cli:<os user>` or `admin-api`. */
  readonly actor?: string;
  readonly clock?: () => number;
  /** Limits and retention; the defaults of src/config.ts when not given. */
  readonly config?: Pick<Config, 'limits' | 'history' | 'idempotencyTtlSeconds' | 'auditMaxEntries' | 'storage' | 'erasure' | 'leaderboards' | 'gate' | 'statsFlushMs' | 'messages' | 'redis'>;
}

export { AUDIT_READ_MAX } from './audit-query.js';

const USAGE_DAYS_MAX = 31;

export class AdminOperations implements AdminContext {
  readonly workspaces: WorkspaceStore;
  readonly apiKeys: ApiKeyStore;
  readonly keyUsage: KeyUsageStore;
  readonly players: PlayerDataStore;
  readonly boards: LeaderboardStore;
  readonly follow: FollowedWrites;
  readonly maxValueDepth: number;
  readonly limits: Config['limits'];
  readonly storageQuota: Config['storage']['quotaBytes'];
  readonly erasure: Config['erasure'];
  /** The gate's settings and the stats interval, for the overview and the bans page. */
  readonly installation: Pick<Config, 'gate' | 'statsFlushMs'>;
  private readonly ownActor: string;
  private readonly auditLog: AuditLogStore;
  private readonly clock: () => number;

  /**
   * The admin operations of an installation, with its limits and retention from its config:
   * how the admin API (server.ts), the CLI (cli/runtime.ts) and the quick start build them.
   * `actor` names who acts in the audit trail.
   */
  static forInstallation(redis: RedisClient, config: Config, actor: string, clock?: () => number): AdminOperations {
    return new AdminOperations(redis, { actor, config, ...(clock ? { clock } : {}) });
  }

  constructor(
    /** Public so that sibling operation modules (admin/bans.ts) share the connection. */
    readonly redis: RedisClient,
    options: AdminOptions = {},
  ) {
    // The stores below call Lua commands; a caller may hand in a client made without them.
    ensureScripts(redis);
    this.workspaces = new WorkspaceStore(redis);
    this.apiKeys = new ApiKeyStore(redis);
    this.keyUsage = new KeyUsageStore(redis);
    const config = options.config ?? loadConfig({});
    this.players = new PlayerDataStore(redis, playerLimitsOf(config));
    const registry = new BoardRegistry(redis, config.leaderboards.maxBoards);
    this.boards = new LeaderboardStore(redis, registry, {
      maxEntries: config.leaderboards.maxEntries,
      idempotencyTtlSeconds: config.idempotencyTtlSeconds,
    });
    // No sweep here: the service's instances sweep; an operator's writes settle their own.
    this.follow = new FollowedWrites(redis, registry, this.boards, {
      recordBoardBytes: (workspaceId, bytes) => addToStorageTotals(redis, workspaceId, { boards: bytes }),
      commandTimeoutMs: config.redis.commandTimeoutMs,
    });
    this.messageStore = new PlayerMessagesStore(redis, config.idempotencyTtlSeconds);
    this.messageLimits = config.messages;
    this.limits = config.limits;
    this.storageQuota = config.storage.quotaBytes;
    this.erasure = config.erasure;
    this.maxValueDepth = config.limits.maxValueDepth;
    this.auditLog = new AuditLogStore(redis, config.auditMaxEntries);
    this.installation = { gate: config.gate, statsFlushMs: config.statsFlushMs };
    this.ownActor = options.actor ?? 'unknown';
    this.clock = options.clock ?? Date.now;
  }

  /** Who acts: this object's actor, or the request's (the console's, src/admin/acting-as.ts). */
  get actor(): string {
    return currentActor() ?? this.ownActor;
  }

  nowMs(): number {
    return this.clock();
  }

  private banOperations: BanOperations | undefined;

  /** Bans, the allow-list and violations, audited as this actor (admin/bans.ts). */
  get bans(): BanOperations {
    this.banOperations ??= new BanOperations(this.redis, this.clock, this);
    return this.banOperations;
  }

  private erasureOperations: ErasureOperations | undefined;

  /** Erasures and the games-to-workspaces map, audited as this actor (admin/erasures.ts). */
  get erasures(): ErasureOperations {
    this.erasureOperations ??= new ErasureOperations(this, this.auditLog);
    return this.erasureOperations;
  }

  private readonly messageStore: PlayerMessagesStore;
  private readonly messageLimits: Config['messages'];
  private messageOperations: MessageOperations | undefined;

  /** A player's waiting messages: list, send, delete (admin/player-messages.ts). */
  get messages(): MessageOperations {
    this.messageOperations ??= new MessageOperations(this, this.messageStore, this.messageLimits);
    return this.messageOperations;
  }

  private boardOperations: BoardOperations | undefined;

  /** A workspace's leaderboards: list, page, remove an entry, reset, periods, follow (admin/leaderboards.ts). */
  get leaderboards(): BoardOperations {
    this.boardOperations ??= new BoardOperations(this, this.boards);
    return this.boardOperations;
  }

  async audit(action: string, target: string, facts: AuditFacts = {}): Promise<void> {
    const entry: AuditEntry = { at: new Date(this.clock()).toISOString(), actor: this.actor, action, target, ...facts };
    await this.auditLog.append(entry);
  }

  async requireWorkspace(id: string): Promise<Workspace> {
    const workspace = isWorkspaceId(id) ? await this.workspaces.get(id) : undefined;
    if (!workspace) throw notFound(`Workspace ${id} not found`);
    return workspace;
  }

  // --- workspaces ---

  async createWorkspace(input: { name: string; plan?: string | undefined; id?: string | undefined }): Promise<CreatedWorkspace> {
    const name = parseName(input.name);
    const plan = parsePlan(input.plan ?? 'free');
    const id = input.id ?? generateWorkspaceId();
    if (!isWorkspaceId(id)) throw badRequest('Workspace id must be 1-64 characters from A-Z a-z 0-9 _ -');
    if ((await this.workspaces.exists(id)) || (await this.workspaces.isIndexed(id))) {
      throw conflict(`Workspace ${id} already exists`);
    }
    await this.workspaces.create({ id, name, plan, createdAt: new Date(this.clock()).toISOString() });
    await publishEvent(this.redis, { type: 'workspace', workspaceId: id, created: true });
    const key = await keyLifecycle.issueKey(this, id);
    await this.audit('workspace.create', `workspace:${id}`, { workspaceId: id, details: { name, plan, keyId: key.keyId } });
    return { workspaceId: id, name, plan, keyId: key.keyId, apiKey: key.apiKey };
  }

  listWorkspaces(): Promise<Workspace[]> {
    return this.workspaces.list();
  }

  getWorkspace(id: string): Promise<Workspace> {
    return this.requireWorkspace(id);
  }

  async showWorkspace(id: string): Promise<WorkspaceDetails> {
    const workspace = await this.requireWorkspace(id);
    const [keyViews, storage] = await Promise.all([keyLifecycle.listKeys(this, id), readStorageTotals(this.redis, id)]);
    const quotaBytes = this.storageQuota[workspace.plan];
    const quotaUsedBytes = quotaBytesOf(storage);
    const dataRedisBytes = estimatedRedisBytes(dataBytesOf(storage), storage.players);
    return { ...workspace, keys: keyViews, storage: { ...storage, quotaBytes, quotaUsedBytes, quotaPercent: percentOfQuota(quotaUsedBytes, quotaBytes), dataRedisBytes } };
  }

  async renameWorkspace(id: string, rawName: string): Promise<Workspace> {
    const workspace = await this.requireWorkspace(id);
    const name = parseName(rawName);
    if (!(await this.workspaces.rename(id, name))) throw notFound(`Workspace ${id} not found`);
    await publishEvent(this.redis, { type: 'workspace', workspaceId: id });
    await this.audit('workspace.rename', `workspace:${id}`, { workspaceId: id, details: { from: workspace.name, to: name } });
    return { ...workspace, name };
  }

  /**
   * Changes the plan. Every instance drops its cached workspace at once, so the new limit
   * applies from the next request; the requests already counted in the current window stay.
   */
  async setPlan(id: string, rawPlan: string): Promise<Workspace> {
    const workspace = await this.requireWorkspace(id);
    const plan = parsePlan(rawPlan);
    if (!(await this.workspaces.setPlan(id, plan))) throw notFound(`Workspace ${id} not found`);
    await publishEvent(this.redis, { type: 'workspace', workspaceId: id });
    await this.audit('workspace.set-plan', `workspace:${id}`, { workspaceId: id, details: { from: workspace.plan, to: plan } });
    return { ...workspace, plan };
  }

  deleteWorkspace(id: string, options?: DeletionOptions): Promise<DeletedWorkspace> {
    if (!isWorkspaceId(id)) return Promise.reject(notFound(`Workspace ${id} not found`));
    return deleteWorkspace(this, id, options);
  }

  /** The workspace's players as NDJSON, streamed (admin/workspace-transfer.ts). */
  exportWorkspace(id: string): Promise<transfer.WorkspaceExport> {
    return transfer.exportWorkspace(this, id);
  }

  /** Loads an export into the workspace (mode skip, overwrite or fail; admin/workspace-transfer.ts). */
  importWorkspace(id: string, source: transfer.ImportSource, options?: transfer.ImportOptions): Promise<transfer.ImportSummary> {
    return transfer.importWorkspace(this, id, source, options);
  }

  /** The whole installation into a new folder, with a manifest (admin/installation-backup.ts). */
  exportInstallation(dir: string, onProgress?: (p: backup.BackupProgress) => void) {
    return backup.exportInstallation(this, dir, onProgress);
  }

  /** A backup folder into this installation, every file checked against its manifest first. */
  importInstallation(
    dir: string,
    options?: { mode?: string | undefined; onCollision?: string | undefined; onProgress?: (p: backup.BackupProgress) => void },
  ) {
    return backup.importInstallation(this, dir, options);
  }

  // --- keys ---

  createKey(workspaceId: string, options?: keyLifecycle.KeyOptions): Promise<keyLifecycle.CreatedKey> {
    return keyLifecycle.createKey(this, workspaceId, options);
  }

  listKeys(workspaceId: string): Promise<keyLifecycle.KeyView[]> {
    return keyLifecycle.listKeys(this, workspaceId);
  }

  revokeKey(keyId: string): Promise<keyLifecycle.KeyView> {
    return keyLifecycle.revokeKey(this, keyId);
  }

  rotateKey(keyId: string, options?: keyLifecycle.RotateOptions): Promise<keyLifecycle.RotatedKey> {
    return keyLifecycle.rotateKey(this, keyId, options);
  }

  // --- the installation at a glance ---

  /** The console's overview: the last hour's traffic, memory, instances, busiest workspaces, recent bans. */
  overview(): Promise<installationOverview.Overview> {
    return installationOverview.overview(this, this.installation.gate, this.installation.statsFlushMs);
  }

  /** The gate's mode on this instance and what it means (the bans page). */
  gateState() {
    return installationOverview.gateState(this.installation.gate);
  }

  // --- usage and audit ---

  usage(workspaceId: string, days: string | number = USAGE_DAYS_DEFAULT): Promise<UsageReport> {
    return usageReport(this, workspaceId, parsePositiveInt(days, 'days', USAGE_DAYS_MAX));
  }

  /** The newest audit entries, newest first, filtered (admin/audit-query.ts). */
  readAudit(options: AuditQuery = {}): Promise<AuditEntry[]> {
    return readAudit(this.auditLog, options);
  }

  // --- the players of a workspace ---

  /** A page of the workspace's players, newest written first, or found by id (admin/player-list.ts). */
  listPlayers(workspaceId: string, query?: playerList.PlayerListQuery): Promise<playerList.PlayerList> {
    return playerList.listPlayers(this, workspaceId, query);
  }

  /** A user id looked up in every workspace, a bounded page of workspaces a call (admin/player-search.ts). */
  searchPlayer(query: playerSearch.PlayerSearchQuery): Promise<playerSearch.PlayerSearch> {
    return playerSearch.searchPlayer(this, query);
  }

  /** Puts every player with data on the players list, once (players written before it existed). */
  indexPlayers(workspaceId: string, onProgress?: (seen: number, added: number) => void) {
    return playerList.indexPlayers(this, workspaceId, onProgress);
  }

  // --- one player's data, for support staff ---

  /** Every key of the player; `view` when a person looks at it (audited player.view), else an export. */
  exportPlayer(workspaceId: string, userId: string | number, purpose: 'export' | 'view' = 'export'): Promise<playerSupport.PlayerExport> {
    return playerSupport.exportPlayer(this, workspaceId, userId, purpose);
  }

  getPlayerValue(workspaceId: string, userId: string | number, key: string): Promise<playerSupport.PlayerEntry> {
    return playerSupport.getPlayerValue(this, workspaceId, userId, key);
  }

  /** With ifVersion, writes only when the player is still at that version (else VERSION_CONFLICT). */
  setPlayerValue(
    workspaceId: string,
    userId: string | number,
    key: string,
    value: unknown,
    ifVersion?: number,
  ): Promise<playerSupport.PlayerEntry> {
    return playerSupport.setPlayerValue(this, workspaceId, userId, key, value, ifVersion);
  }

  deletePlayerData(workspaceId: string, userId: string | number, key?: string, ifVersion?: number): Promise<{ deleted: number; version: number }> {
    return playerSupport.deletePlayerData(this, workspaceId, userId, key, ifVersion);
  }

  playerSession(workspaceId: string, userId: string | number): Promise<playerSupport.PlayerSessionView> {
    return playerSupport.playerSession(this, workspaceId, userId);
  }

  releasePlayerSession(workspaceId: string, userId: string | number): Promise<{ released: boolean; sessionId: string; owner: string }> {
    return playerSupport.releasePlayerSession(this, workspaceId, userId);
  }

  // --- one player's history ---

  /** The versions retained, newest first, `limit` a page (default 20, at most 100), before a version. */
  playerHistory(
    workspaceId: string,
    userId: string | number,
    options?: { limit?: string | number | undefined; before?: string | number | undefined },
  ): Promise<playerHistory.PlayerHistory> {
    return playerHistory.playerHistory(this, workspaceId, userId, options);
  }

  /** The whole player as it was at a retained version (404 VERSION_NOT_RETAINED otherwise). */
  playerAtVersion(workspaceId: string, userId: string | number, version: string | number): Promise<playerHistory.PlayerAtVersion> {
    return playerHistory.playerAtVersion(this, workspaceId, userId, version);
  }

  /** Makes the player's data what it was at a retained version, as a new version (see player-history.ts). */
  restorePlayer(
    workspaceId: string,
    userId: string | number,
    version: string | number,
    options?: { force?: boolean | undefined },
  ): Promise<playerHistory.RestoredPlayer> {
    return playerHistory.restorePlayer(this, workspaceId, userId, version, options);
  }
}
