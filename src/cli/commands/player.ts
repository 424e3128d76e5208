// `player ...`: one player's data, for support staff. Every call is in the audit trail.
import type { Command } from 'commander';
import { parseJsonValue } from '../../admin/inputs.js';
import { badRequest } from '../../errors.js';
import { confirm, run, table, type ConfirmOptions, type OutputOptions } from '../context.js';
import { eraseCommand } from './erasure.js';

interface PlayerOptions extends ConfirmOptions {
  workspace: string;
  user: string;
  key?: string;
}

export function playerCommands(program: Command): void {
  const player = program.command('player').description("read, change, delete or export one player's data");
  const target = (c: Command) =>
    c.requiredOption('--workspace <id>', 'workspace id').requiredOption('--user <userId>', "the player's user id");

  target(player.command('get'))
    .description('show one key of a player, or all of them without --key')
    .option('--key <key>', 'the key to read')
    .option('--json', 'print one line of JSON')
    .action((opts: PlayerOptions) =>
      run(
        opts,
        ({ ops }): Promise<object> =>
          opts.key === undefined ? ops.exportPlayer(opts.workspace, opts.user) : ops.getPlayerValue(opts.workspace, opts.user, opts.key),
        (r) => JSON.stringify(r, null, 2),
      ),
    );

  target(player.command('export'))
    .description("print all of a player's data, with update times, as JSON")
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

  // History and restore take the workspace and the player as arguments, as issue 18 names them.
  player
    .command('history')
    .description("list the player's versions that can still be shown and restored, newest first")
    .argument('<workspaceId>', 'workspace id')
    .argument('<userId>', "the player's user id")
    .option('--limit <n>', 'versions per page, 1-100', '20')
    .option('--before <version>', 'only versions below this one (the previous page\'s next)')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, userId: string, opts: OutputOptions & { limit: string; before?: string }) =>
      run(
        opts,
        ({ ops }) => ops.playerHistory(workspaceId, userId, { limit: opts.limit, before: opts.before }),
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

  player
    .command('show')
    .description('show all of a player\'s data, now or (with --version) as it was at a retained version')
    .argument('<workspaceId>', 'workspace id')
    .argument('<userId>', "the player's user id")
    .option('--version <n>', 'a version from `player history`')
    .option('--json', 'print one line of JSON (default: indented)')
    .action((workspaceId: string, userId: string, opts: OutputOptions & { version?: string }) =>
      run(
        opts,
        ({ ops }): Promise<object> =>
          opts.version === undefined ? ops.exportPlayer(workspaceId, userId) : ops.playerAtVersion(workspaceId, userId, opts.version),
        (r) => JSON.stringify(r, null, 2),
      ),
    );

  player
    .command('restore')
    .description("make the player's data what it was at a retained version, as a new version (needs --yes)")
    .argument('<workspaceId>', 'workspace id')
    .argument('<userId>', "the player's user id")
    .requiredOption('--version <n>', 'the version to bring back, from `player history`')
    .option('--force', "end the session of a game server that holds the player first (its next write gets SESSION_LOST)")
    .option('--yes', 'confirm: the current data is replaced (it stays in the history)')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, userId: string, opts: ConfirmOptions & { version: string; force?: boolean }) =>
      run(
        opts,
        ({ ops }) => ops.restorePlayer(workspaceId, userId, opts.version, { force: opts.force === true }),
        (r) =>
          `restored player ${r.userId} to version ${r.restoredFrom} as version ${r.version} (${r.set} key(s) set, ${r.deleted} deleted)` +
          (r.endedSession ? `; ended the session of ${r.endedSession.owner}` : ''),
        () => {
          if (!opts.yes) {
            throw badRequest(`Restoring player ${userId} to version ${opts.version} replaces its current data (which stays in the history): run again with --yes to confirm`);
          }
        },
      ),
    );
}
