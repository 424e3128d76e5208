// `player ...`: one player's data, for support staff, and the players of a workspace. Every
// command names its player the same way, `--workspace ID --user USERID` (flags, never
// positions). `show` is for reading (a table, or at a version); `export` writes the one-player
// export document, for a file or an import. Reads of a player's data are in the audit trail.
import type { Command } from 'commander';
import { parseJsonValue } from '../../admin/inputs.js';
import type { PlayerAtVersion, PlayerList } from '../../admin/operations.js';
import type { PlayerEntry } from '../../admin/player-support.js';
import { badRequest } from '../../errors.js';
import { confirm, run, table, type ConfirmOptions, type OutputOptions } from '../context.js';
import { eraseCommand } from './erasure.js';
import { messageCommands } from './player-messages.js';

interface PlayerOptions extends ConfirmOptions {
  workspace: string;
  user: string;
  key?: string;
}

type Shown = { userId: string; version: number; data: Record<string, { value: unknown; updated_at: string }> };

/** A player's data for people: a header line and one row a key, the value as compact JSON. */
function showText(r: Shown | PlayerEntry): string {
  if ('key' in r) return `${r.key} = ${JSON.stringify(r.value)}\nupdated_at ${r.updated_at}; player version ${r.version}`;
  const at = 'currentVersion' in r ? ` (at version ${r.version} of ${(r as PlayerAtVersion).currentVersion})` : ` (version ${r.version})`;
  const rows = Object.entries(r.data).map(([key, e]) => [key, e.updated_at, JSON.stringify(e.value)]);
  return [`player ${r.userId}${at}: ${rows.length} key(s)`, ...(rows.length ? [table(['KEY', 'UPDATED_AT', 'VALUE'], rows)] : [])].join('\n');
}

function listText(l: PlayerList): string {
  const rows = l.players.map((p) => [
    p.userId,
    p.lastWriteAt ?? '(before the list)',
    String(p.version),
    p.keys === null ? '-' : String(p.keys),
    p.bytes === null ? '-' : String(p.bytes),
    p.session ? `${p.session.owner} until ${p.session.expiresAt}` : '-',
  ]);
  return [
    `${l.listed} player(s) on the players list of ${l.workspaceId}`,
    table(['USER', 'LAST WRITE', 'VERSION', 'KEYS', 'BYTES', 'HELD BY'], rows),
    ...(l.next === null ? [] : [`more: --cursor ${l.next}`]),
  ].join('\n');
}

export function playerCommands(program: Command): void {
  const player = program.command('player').description("read, change, delete or export one player's data");
  const target = (c: Command) =>
    c.requiredOption('--workspace <id>', 'workspace id').requiredOption('--user <userId>', "the player's user id");

  target(player.command('show'))
    .alias('get')
    .description("show a player's data: every key, one key (--key), or every key as it was at a retained version (--version)")
    .option('--key <key>', 'only this key')
    .option('--version <n>', 'a version from `player history`')
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions & { version?: string }) =>
      run(
        opts,
        ({ ops }): Promise<Shown | PlayerEntry> => {
          if (opts.key !== undefined && opts.version !== undefined) throw badRequest('Give --key or --version, not both');
          if (opts.version !== undefined) return ops.playerAtVersion(opts.workspace, opts.user, opts.version);
          return opts.key === undefined ? ops.exportPlayer(opts.workspace, opts.user) : ops.getPlayerValue(opts.workspace, opts.user, opts.key);
        },
        (r) => showText(r),
      ),
    );

  target(player.command('export'))
    .description("print the player's export document (JSON, every key with its update time): for a file, or a workspace import (docs/backups.md)")
    .option('--json', 'print one line of JSON (default: indented)')
    .action((opts: PlayerOptions & OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.exportPlayer(opts.workspace, opts.user),
        (r) => JSON.stringify(r, null, 2),
      ),
    );

  target(player.command('set'))
    .description('overwrite one key of a player (needs --yes)')
    .requiredOption('--key <key>', 'the key to write')
    .requiredOption('--value <json>', 'the value as JSON: 100, \'"text"\', true, \'{"level":3}\'')
    .option('--yes', 'confirm: the old value is lost')
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions & { key: string; value: string }) =>
      run(
        opts,
        ({ ops }) => ops.setPlayerValue(opts.workspace, opts.user, opts.key, parseJsonValue(opts.value)),
        (r) => `set ${r.key} = ${JSON.stringify(r.value)} at ${r.updated_at}`,
        () => {
          // A bad value is refused before anything connects.
          parseJsonValue(opts.value);
          confirm(opts, `Overwriting ${opts.key} of player ${opts.user}`);
        },
      ),
    );

  target(player.command('delete'))
    .description("delete one key of a player, or all the player's data without --key (needs --yes)")
    .option('--key <key>', 'the key to delete')
    .option('--yes', 'confirm: this cannot be undone')
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions) =>
      run(
        opts,
        ({ ops }) => ops.deletePlayerData(opts.workspace, opts.user, opts.key),
        (r) => `deleted ${r.deleted} key(s)`,
        () => confirm(opts, opts.key === undefined ? `Deleting all data of player ${opts.user}` : `Deleting ${opts.key} of player ${opts.user}`),
      ),
    );

  target(player.command('session'))
    .description("show the session that holds the player (the game server's lock), if any")
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions) =>
      run(
        opts,
        ({ ops }) => ops.playerSession(opts.workspace, opts.user),
        (r) =>
          r.session
            ? `player ${r.userId} (version ${r.version}) is held by ${r.session.owner} until ${r.session.expiresAt} (${r.session.sessionId})`
            : `player ${r.userId} (version ${r.version}) is held by no session`,
      ),
    );

  target(player.command('release-session'))
    .description('end the session that holds the player, e.g. of a crashed server (needs --yes)')
    .option('--yes', "confirm: the holder's next write is refused with SESSION_LOST")
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions) =>
      run(
        opts,
        ({ ops }) => ops.releasePlayerSession(opts.workspace, opts.user),
        (r) => `released the session of ${r.owner} (${r.sessionId})`,
        () => confirm(opts, `Ending the session of player ${opts.user}`),
      ),
    );

  eraseCommand(player);
  messageCommands(player, target);

  target(player.command('history'))
    .description("list the player's versions that can still be shown and restored, newest first")
    .option('--limit <n>', 'versions per page, 1-100', '20')
    .option('--before <version>', 'only versions below this one (the previous page\'s next)')
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions & { limit: string; before?: string }) =>
      run(
        opts,
        ({ ops }) => ops.playerHistory(opts.workspace, opts.user, { limit: opts.limit, before: opts.before }),
        (h) =>
          [
            `player ${h.userId}: version ${h.version}`,
            table(
              ['VERSION', 'TIME', 'KIND', 'BY', 'KEYS'],
              h.versions.map((v) => [
                String(v.version),
                v.time ?? '-',
                v.kind ?? (v.version === h.version ? '(current)' : '(no data yet)'),
                v.by ?? '-',
                v.keys ? v.keys.join(', ') : '-',
              ]),
            ),
            ...(h.nextBefore === null ? [] : [`more: --before ${h.nextBefore}`]),
          ].join('\n'),
      ),
    );

  target(player.command('restore'))
    .description("make the player's data what it was at a retained version, as a new version (needs --yes)")
    .requiredOption('--version <n>', 'the version to bring back, from `player history`')
    .option('--force', "end the session of a game server that holds the player first (its next write gets SESSION_LOST)")
    .option('--yes', 'confirm: the current data is replaced (it stays in the history)')
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions & { version: string; force?: boolean }) =>
      run(
        opts,
        ({ ops }) => ops.restorePlayer(opts.workspace, opts.user, opts.version, { force: opts.force === true }),
        (r) =>
          `restored player ${r.userId} to version ${r.restoredFrom} as version ${r.version} (${r.set} key(s) set, ${r.deleted} deleted)` +
          (r.endedSession ? `; ended the session of ${r.endedSession.owner}` : ''),
        () => {
          if (!opts.yes) {
            throw badRequest(`Restoring player ${opts.user} to version ${opts.version} replaces its current data (which stays in the history): run again with --yes to confirm`);
          }
        },
      ),
    );

  player
    .command('list')
    .description('the players of a workspace, newest written first (the players list), or found by user id')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--prefix <start>', 'only players whose user id starts with this')
    .option('--limit <n>', 'players per page, 1-100', '25')
    .option('--cursor <next>', "the page after the one whose `more:` named this")
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace: string; prefix?: string; limit: string; cursor?: string }) =>
      run(opts, ({ ops }) => ops.listPlayers(opts.workspace, { prefix: opts.prefix, limit: opts.limit, cursor: opts.cursor }), listText),
    );

  player
    .command('index')
    .description('put every player with data on the workspace\'s players list, once: players written before the list existed, or imported (SCANs the keyspace)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace: string }) =>
      run(
        opts,
        ({ ops }) => ops.indexPlayers(opts.workspace),
        (r) => `players list of ${r.workspaceId}: ${r.seen} player(s) seen, ${r.added} added or moved to their last write; ${r.listed} listed`,
      ),
    );
}
