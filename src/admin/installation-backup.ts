// A whole installation to a folder and back, for disaster recovery and moving to another Redis
// or to a cluster: workspaces (with their plans), API keys by their SHA-256 only, bans and the
// allow-list, each workspace's erasure player names and games (on its line of workspaces.ndjson),
// and every workspace's players (one NDJSON file per workspace, as `workspace export` writes it). manifest.json, written last, lists every file with its line count, size
// and SHA-256: a folder without it is an unfinished backup, and an import checks every file
// against it before it writes anything. docs/backups.md describes the layout.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isWorkspaceId } from '../domain/ids.js';
import { AppError, badRequest, conflict, ErrorCode } from '../errors.js';
import { publishEvent } from '../store/redis/events.js';
import { GameMap } from '../store/installation/game-map.js';
import { ErasurePlayerNames } from '../store/workspaces/erasure-names.js';
import {
  readApiKeysRaw,
  readGateList,
  readWorkspaceRaw,
  restoreApiKeyRaw,
  restoreGateEntry,
  restoreWorkspaceRaw,
  workspaceIds,
  type ApiKeyRecordRaw,
  type GateList,
  type WorkspaceRecordRaw,
} from '../store/installation/installation-records.js';
import { parseCollisionOption, planRestore, type RestorePlan } from './backup-collisions.js';
import type { AdminContext } from './context.js';
import { parseErasurePlayerNames, parseGameIds, type ErasureOperations } from './erasures.js';
import { createNewFileStream, writeWhole } from './new-files.js';
import { ndjsonLines } from './ndjson-lines.js';
import { exportWorkspace, importWorkspace, parseImportMode, type ImportSummary } from './workspace-transfer.js';

export const MANIFEST = 'manifest.json';
export const BACKUP_FORMAT = 'pds-installation-backup';
export const BACKUP_FORMAT_VERSION = 1;
const WORKSPACES = 'workspaces.ndjson';
const API_KEYS = 'api-keys.ndjson';
const BANS = 'bans.ndjson';
const ALLOW = 'ban-allow.ndjson';
const playersFile = (workspaceId: string) => `players/${workspaceId}.ndjson`;

/**
 * One line of workspaces.ndjson: the workspace's record field for field, with its erasure
 * player names and the games it serves when it has any. A backup written before these two
 * fields existed has neither: its workspaces are restored without them.
 */
export interface WorkspaceLine extends WorkspaceRecordRaw {
  readonly erasurePlayers?: string[];
  readonly games?: string[];
}

export interface ManifestFile {
  readonly name: string;
  readonly lines: number;
  readonly bytes: number;
  readonly sha256: string;
}

export interface Manifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly formatVersion: number;
  readonly createdAt: string;
  readonly counts: {
    workspaces: number;
    apiKeys: number;
    bans: number;
    allowEntries: number;
    players: number;
    keys: number;
    /** Absent from a backup written before they were carried. */
    erasurePlayers?: number;
    games?: number;
  };
  readonly files: ManifestFile[];
}

export interface BackupProgress {
  readonly workspaceId: string;
  readonly players: number;
}

/** Writes lines to `dir/name`, hashing and counting them on the way. */
async function writeCounted(dir: string, name: string, lines: AsyncIterable<string>): Promise<ManifestFile> {
  const hash = createHash('sha256');
  let count = 0;
  let bytes = 0;
  async function* counted() {
    for await (const line of lines) {
      const buf = Buffer.from(line);
      hash.update(buf);
      count++;
      bytes += buf.length;
      yield buf;
    }
  }
  // Created new: a link planted in the folder since it was found empty is refused, not followed.
  await pipeline(Readable.from(counted()), await createNewFileStream(join(dir, name)));
  return { name, lines: count, bytes, sha256: hash.digest('hex') };
}

async function* jsonLines<T>(items: Iterable<T> | AsyncIterable<T>): AsyncGenerator<string> {
  for await (const item of items) yield `${JSON.stringify(item)}\n`;
}

export async function exportInstallation(
  ctx: AdminContext,
  dir: string,
  onProgress?: (p: BackupProgress) => void,
): Promise<Manifest & { readonly dir: string; readonly ms: number }> {
  const started = Date.now();
  await mkdir(dir, { recursive: true });
  if ((await readdir(dir)).length > 0) throw badRequest(`${dir} is not empty: a backup goes into a new or empty folder`);
  await mkdir(join(dir, 'players'));

  const workspaces: WorkspaceRecordRaw[] = [];
  for (const id of await workspaceIds(ctx.redis)) {
    const record = await readWorkspaceRaw(ctx.redis, id);
    if (record) workspaces.push(record);
  }
  // The games map is read whole (small); a game of a workspace not in the backup is left out.
  const playerNames = new ErasurePlayerNames(ctx.redis);
  const gameMap = new GameMap(ctx.redis);
  let templateCount = 0;
  let gameCount = 0;
  const lines: WorkspaceLine[] = [];
  for (const w of workspaces) {
    const templates = await playerNames.of(w.id);
    const games = await gameMap.of(w.id);
    templateCount += templates.length;
    gameCount += games.length;
    lines.push({ ...w, ...(templates.length > 0 ? { erasurePlayers: templates } : {}), ...(games.length > 0 ? { games } : {}) });
  }
  const files: ManifestFile[] = [await writeCounted(dir, WORKSPACES, jsonLines(lines))];
  const apiKeys: ApiKeyRecordRaw[] = [];
  for (const w of workspaces) apiKeys.push(...(await readApiKeysRaw(ctx.redis, w.id)));
  files.push(await writeCounted(dir, API_KEYS, jsonLines(apiKeys)));
  const gate = async (list: GateList, name: string) => {
    const entries = Object.entries(await readGateList(ctx.redis, list)).sort(([a], [b]) => a.localeCompare(b));
    files.push(await writeCounted(dir, name, jsonLines(entries.map(([subject, record]) => ({ subject, record })))));
  };
  await gate('bans', BANS);
  await gate('allow', ALLOW);

  let players = 0;
  let dataKeys = 0;
  for (const w of workspaces) {
    const exported = await exportWorkspace(ctx, w.id);
    async function* lines() {
      for await (const line of exported.lines) {
        yield line;
        if (exported.stats.players % 1000 === 0) onProgress?.({ workspaceId: w.id, players: exported.stats.players });
      }
    }
    files.push(await writeCounted(dir, playersFile(w.id), lines()));
    players += exported.stats.players;
    dataKeys += exported.stats.keys;
  }
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    createdAt: new Date(ctx.nowMs()).toISOString(),
    counts: {
      workspaces: workspaces.length,
      apiKeys: apiKeys.length,
      bans: files[2]!.lines,
      allowEntries: files[3]!.lines,
      players,
      keys: dataKeys,
      erasurePlayers: templateCount,
      games: gameCount,
    },
    files,
  };
  // Last, and whole or not at all: its presence says the backup is complete.
  await writeWhole(join(dir, MANIFEST), (out) => pipeline(Readable.from([`${JSON.stringify(manifest, null, 2)}\n`]), out));
  await ctx.audit('installation.export', 'installation', { details: { workspaces: workspaces.length, players } });
  return { ...manifest, dir, ms: Date.now() - started };
}

function invalid(message: string): AppError {
  return new AppError(ErrorCode.INVALID_REQUEST, `Backup refused, nothing written: ${message}`);
}

async function readManifest(dir: string): Promise<Manifest> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch (err) {
    throw invalid(`cannot read ${join(dir, MANIFEST)} (${(err as Error).message}); a folder without it is an unfinished backup`);
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.formatVersion !== BACKUP_FORMAT_VERSION || !Array.isArray(manifest.files)) {
    throw invalid(`${MANIFEST} is not a version ${BACKUP_FORMAT_VERSION} ${BACKUP_FORMAT} manifest`);
  }
  for (const name of [WORKSPACES, API_KEYS, BANS, ALLOW]) {
    if (!manifest.files.some((f) => f.name === name)) throw invalid(`${MANIFEST} does not list ${name}`);
  }
  return manifest;
}

/** Every file's size and SHA-256 as the manifest says, streamed (players files may be large). */
async function verify(dir: string, manifest: Manifest): Promise<void> {
  for (const file of manifest.files) {
    if (typeof file.name !== 'string' || file.name.includes('..') || !/^(players\/)?[A-Za-z0-9_.-]+$/.test(file.name)) {
      throw invalid(`${MANIFEST} names a file outside the backup: ${JSON.stringify(file.name)}`);
    }
    const hash = createHash('sha256');
    let bytes = 0;
    try {
      for await (const chunk of createReadStream(join(dir, file.name))) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
    } catch (err) {
      throw invalid(`cannot read ${file.name} (${(err as Error).message})`);
    }
    const sha256 = hash.digest('hex');
    if (bytes !== file.bytes || sha256 !== file.sha256) {
      throw invalid(`${file.name} does not match ${MANIFEST} (${bytes} bytes, SHA-256 ${sha256}; expected ${file.bytes} bytes, ${file.sha256})`);
    }
  }
}

async function* records<T>(dir: string, name: string): AsyncGenerator<T> {
  for await (const line of ndjsonLines(createReadStream(join(dir, name)), 1024 * 1024)) {
    if ('tooLong' in line) throw invalid(`${name} line ${line.number} is too long`);
    let record: unknown;
    try {
      record = JSON.parse(line.text);
    } catch {
      throw invalid(`${name} line ${line.number} is not JSON`);
    }
    if (typeof record !== 'object' || record === null) throw invalid(`${name} line ${line.number} is not a record`);
    yield record as T;
  }
}

export interface InstallationImport {
  readonly dir: string;
  readonly workspaces: { created: number; existing: number };
  /** The backup's workspaces restored under a new id: their id was another workspace's here. */
  readonly renamed: RestorePlan['renamed'];
  /** The backup's workspaces left out for the same reason (on-collision skip). */
  readonly skipped: string[];
  readonly apiKeys: { created: number; existing: number };
  readonly bans: { created: number; existing: number };
  readonly allowEntries: { created: number; existing: number };
  /** Workspaces whose erasure player names were set by the restore, or found set already (kept as they are). */
  readonly erasurePlayers: { created: number; existing: number };
  /** Games mapped to their restored workspace, or found mapped to it already. */
  readonly games: { created: number; existing: number };
  /**
   * Games of the backup that another workspace serves here: left with it (a restore never takes
   * a game from a tenant), and not mapped to the restored workspace.
   */
  readonly gamesServedElsewhere: GameServedElsewhere[];
  readonly players: ImportSummary[];
  readonly ms: number;
}

export interface GameServedElsewhere {
  readonly gameId: string;
  /** The backup's workspace that served it, under the id it is restored as. */
  readonly workspaceId: string;
  /** The workspace of this installation that serves it. */
  readonly servedBy: string;
}

/**
 * Loads a backup into this installation's Redis (empty, or not: records that exist are kept,
 * players follow `mode`). Every file is checked against the manifest first, and where each
 * workspace goes is decided before anything is written (admin/backup-collisions.ts: a workspace
 * id that holds another workspace here refuses the import, unless `onCollision` says rename or
 * skip); then workspaces, keys, bans and allow-list, each workspace's erasure player names and
 * games (through the admin ops that set them, so with their checks, audit entries and requeued
 * erasure jobs; a game another workspace serves here is left to it and reported), then each
 * workspace's players. Safe to run again after an interruption: what was written is found and kept.
 */
export async function importInstallation(
  ctx: AdminContext & { readonly erasures: Pick<ErasureOperations, 'setGames' | 'setErasurePlayers'> },
  dir: string,
  options: { mode?: string | undefined; onCollision?: string | undefined; onProgress?: (p: BackupProgress) => void } = {},
): Promise<InstallationImport> {
  const started = Date.now();
  const mode = parseImportMode(options.mode);
  const onCollision = parseCollisionOption(options.onCollision);
  const manifest = await readManifest(dir);
  await verify(dir, manifest);

  const result = {
    dir,
    workspaces: { created: 0, existing: 0 },
    renamed: [] as RestorePlan['renamed'],
    skipped: [] as string[],
    apiKeys: { created: 0, existing: 0 },
    bans: { created: 0, existing: 0 },
    allowEntries: { created: 0, existing: 0 },
    erasurePlayers: { created: 0, existing: 0 },
    games: { created: 0, existing: 0 },
    gamesServedElsewhere: [] as GameServedElsewhere[],
    players: [] as ImportSummary[],
    ms: 0,
  };
  const tally = (t: { created: number; existing: number }, created: boolean) => (created ? t.created++ : t.existing++);
  // The records are few (one a workspace, key, ban): all read and checked before the first write.
  const workspaces: WorkspaceLine[] = [];
  const gameOwners = new Map<string, string>();
  for await (const record of records<WorkspaceLine>(dir, WORKSPACES)) {
    if (typeof record.id !== 'string' || !isWorkspaceId(record.id) || typeof record.fields !== 'object' || record.fields === null) {
      throw invalid(`${WORKSPACES} holds a bad workspace record ${JSON.stringify(record).slice(0, 100)}`);
    }
    // Checked as the admin ops check them, so that no write of the restore is refused halfway.
    const checked = (what: string, raw: unknown, parse: (raw: string[]) => string[]): string[] => {
      if (raw === undefined) return [];
      if (!Array.isArray(raw)) throw invalid(`${WORKSPACES}: workspace ${record.id}'s ${what} is not a list`);
      try {
        return parse(raw as string[]);
      } catch (err) {
        throw invalid(`${WORKSPACES}: workspace ${record.id}'s ${what}: ${(err as Error).message}`);
      }
    };
    const erasurePlayers = checked('erasurePlayers', record.erasurePlayers, parseErasurePlayerNames);
    const games = checked('games', record.games, parseGameIds);
    for (const game of games) {
      const other = gameOwners.get(game);
      if (other !== undefined) throw invalid(`${WORKSPACES}: game ${game} is served by two workspaces, ${other} and ${record.id}`);
      gameOwners.set(game, record.id);
    }
    workspaces.push({ ...record, erasurePlayers, games });
  }
  const apiKeys: ApiKeyRecordRaw[] = [];
  const backupIds = new Set(workspaces.map((w) => w.id));
  for await (const record of records<ApiKeyRecordRaw>(dir, API_KEYS)) {
    if (typeof record.keyHash !== 'string' || !/^[0-9a-f]{64}$/.test(record.keyHash)) throw invalid(`${API_KEYS} holds a key hash that is not a SHA-256`);
    const owner = record.fields?.['workspaceId'];
    if (typeof owner !== 'string' || !isWorkspaceId(owner) || typeof record.fields['keyId'] !== 'string') {
      throw invalid(`${API_KEYS} holds a key without a valid keyId and workspaceId`);
    }
    // Restored, it would open whatever workspace has that id here.
    if (!backupIds.has(owner)) throw invalid(`${API_KEYS} holds key ${record.fields['keyId']} of workspace ${owner}, which is not in ${WORKSPACES}`);
    apiKeys.push(record);
  }
  const gateEntries: Array<{ list: GateList; subject: string; record: string }> = [];
  for (const [list, name] of [['bans', BANS], ['allow', ALLOW]] as const) {
    for await (const entry of records<{ subject: string; record: string }>(dir, name)) {
      if (typeof entry.subject !== 'string' || typeof entry.record !== 'string') throw invalid(`${name} holds an entry without subject and record`);
      gateEntries.push({ list, ...entry });
    }
  }

  const plan = await planRestore(ctx.redis, workspaces, apiKeys, onCollision);
  result.renamed = plan.renamed;
  result.skipped = plan.skipped;
  // Games another workspace serves here stay with it: found before the first write, so the
  // summary says the same on every run.
  const gamesHere = await new GameMap(ctx.redis).all();
  const gamesToMap = new Map<string, string[]>();
  for (const record of workspaces) {
    const to = plan.targets.get(record.id);
    if (to === undefined) continue;
    const mine: string[] = [];
    for (const gameId of record.games ?? []) {
      const servedBy = gamesHere[gameId];
      if (servedBy === undefined || servedBy === to) mine.push(gameId);
      else result.gamesServedElsewhere.push({ gameId, workspaceId: to, servedBy });
    }
    gamesToMap.set(to, mine);
  }
  const restored: Array<{ from: string; to: string; record: WorkspaceLine }> = [];
  for (const record of workspaces) {
    const to = plan.targets.get(record.id);
    if (to === undefined) continue;
    const created = await restoreWorkspaceRaw(ctx.redis, { id: to, fields: { ...record.fields, id: to } });
    // Made by somebody else since the plan was checked: its keys must not be attached to it.
    if (!created && (await readWorkspaceRaw(ctx.redis, to))?.fields['createdAt'] !== record.fields['createdAt']) {
      throw conflict(`Workspace ${to} was created by another operation during the restore: stopped before restoring its keys; run the import again`);
    }
    tally(result.workspaces, created);
    await publishEvent(ctx.redis, { type: 'workspace', workspaceId: to });
    restored.push({ from: record.id, to, record });
  }
  for (const record of apiKeys) {
    const to = plan.targets.get(record.fields['workspaceId']!);
    if (to === undefined) continue;
    tally(result.apiKeys, await restoreApiKeyRaw(ctx.redis, { keyHash: record.keyHash, fields: { ...record.fields, workspaceId: to } }));
    await publishEvent(ctx.redis, { type: 'key', keyHash: record.keyHash });
  }
  for (const entry of gateEntries) {
    tally(entry.list === 'bans' ? result.bans : result.allowEntries, await restoreGateEntry(ctx.redis, entry.list, entry.subject, entry.record));
  }
  await publishEvent(ctx.redis, { type: 'ban' });
  const playerNames = new ErasurePlayerNames(ctx.redis);
  const gameMap = new GameMap(ctx.redis);
  for (const { to, record } of restored) {
    // Names set here since the backup (the same workspace) are kept, as every existing record is.
    if ((record.erasurePlayers ?? []).length > 0) {
      const here = await playerNames.of(to);
      if (here.length === 0) await ctx.erasures.setErasurePlayers(to, record.erasurePlayers!);
      tally(result.erasurePlayers, here.length === 0);
    }
    const games = gamesToMap.get(to) ?? [];
    const here = await gameMap.of(to);
    const added = games.filter((g) => !here.includes(g));
    result.games.existing += games.length - added.length;
    // The workspace keeps the games it serves here, and gains the backup's: set-games sets the whole list.
    if (added.length > 0) await ctx.erasures.setGames(to, [...here, ...added]);
    result.games.created += added.length;
  }
  for (const { from, to } of restored) {
    const name = playersFile(from);
    if (!manifest.files.some((f) => f.name === name)) continue;
    options.onProgress?.({ workspaceId: to, players: 0 });
    result.players.push(await importWorkspace(ctx, to, { path: join(dir, name) }, { mode }));
  }
  result.ms = Date.now() - started;
  await ctx.audit('installation.import', 'installation', {
    details: {
      workspaces: result.workspaces.created,
      apiKeys: result.apiKeys.created,
      players: result.players.reduce((n, s) => n + s.imported + s.replaced, 0),
      onCollision,
      renamed: result.renamed.map((r) => `${r.from}->${r.to}`).join(' '),
      skipped: result.skipped.join(' '),
      games: result.games.created,
      gamesServedElsewhere: result.gamesServedElsewhere.map((g) => `${g.gameId}:${g.servedBy}`).join(' '),
    },
  });
  return result;
}
