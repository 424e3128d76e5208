// `player message`, `player messages`, `player delete-messages`: a player's waiting messages
// (admin/player-messages.ts). The message is given with --message, since --json means "print
// one line of JSON" on every command.
import type { Command } from 'commander';
import { parseJsonValue } from '../../admin/inputs.js';
import { badRequest } from '../../errors.js';
import { confirm, run, table, type ConfirmOptions } from '../context.js';

interface Target extends ConfirmOptions {
  workspace: string;
  user: string;
}

export function messageCommands(player: Command, target: (c: Command) => Command): void {
  target(player.command('message'))
    .description('leave a message for a player (a gift, a note from support): the server that holds it processes it (docs/safe-saves.md)')
    .requiredOption('--message <json>', 'the message as JSON: \'{"gift":"sword"}\'')
    .option('--ttl <seconds>', 'how long it waits to be processed (default MESSAGE_TTL_SECONDS, 30 days)')
    .option('--json', 'print one line of JSON')
    .action((opts: Target & { message: string; ttl?: string }) => {
      const ttl = opts.ttl === undefined ? undefined : Number(opts.ttl);
      return run(
        opts,
        ({ ops }) => ops.messages.send(opts.workspace, opts.user, parseJsonValue(opts.message), ttl),
        (r) => `left ${r.messageId} for player ${r.userId}; it waits until ${r.expiresAt}`,
        () => {
          // Bad input is refused before anything connects.
          parseJsonValue(opts.message);
          if (ttl !== undefined && !Number.isInteger(ttl)) throw badRequest('--ttl must be whole seconds');
        },
      );
    });

  target(player.command('messages'))
    .description('list the messages waiting for a player, oldest first')
    .option('--json', 'print one line of JSON')
    .action((opts: Target) =>
      run(
        opts,
        ({ ops }) => ops.messages.list(opts.workspace, opts.user),
        (r) =>
          r.messages.length === 0
            ? `no messages wait for player ${r.userId}`
            : [
                `${r.messages.length} message(s) wait for player ${r.userId}`,
                table(['ID', 'SENT', 'EXPIRES', 'MESSAGE'], r.messages.map((m) => [m.id, m.sentAt, m.expiresAt, JSON.stringify(m.message)])),
              ].join('\n'),
      ),
    );

  target(player.command('delete-messages'))
    .description("delete one waiting message (--id), or every message waiting for the player (needs --yes)")
    .option('--id <messageId>', 'only this message')
    .option('--yes', 'confirm: the player never gets them')
    .option('--json', 'print one line of JSON')
    .action((opts: Target & { id?: string }) =>
      run(
        opts,
        ({ ops }) => ops.messages.delete(opts.workspace, opts.user, opts.id),
        (r) => `deleted ${r.deleted} message(s) of player ${r.userId}`,
        () => confirm(opts, opts.id === undefined ? `Deleting every message waiting for player ${opts.user}` : `Deleting message ${opts.id}`),
      ),
    );
}
