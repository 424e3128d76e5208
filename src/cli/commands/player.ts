// `player ...`: one player's data, for support staff. Every call is in the audit trail.
import type { Command } from 'commander';
import { parseJsonValue } from '../../admin/inputs.js';
import { confirm, run, type ConfirmOptions, type OutputOptions } from '../context.js';

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
}
