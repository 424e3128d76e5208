// `board ...`: a workspace's leaderboards (admin/leaderboards.ts). Every change is audited.
import type { Command } from 'commander';
import { parsePeriods } from '../../admin/leaderboards.js';
import { badRequest } from '../../errors.js';
import { confirm, run, table, type ConfirmOptions, type OutputOptions } from '../context.js';

interface ShowOptions extends OutputOptions {
  period?: string;
  previous?: boolean;
  asc?: boolean;
  limit: string;
  after?: string;
}

interface RankOptions extends OutputOptions {
  period?: string;
  previous?: boolean;
  asc?: boolean;
  around: string;
}

export function boardCommands(program: Command): void {
  const board = program.command('board').description("a workspace's leaderboards: list, show, a player's rank, remove an entry, reset, periods, follow");

  board
    .command('list')
    .description("list a workspace's leaderboards with their periods, followed key and entries")
    .argument('<workspaceId>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.leaderboards.list(workspaceId),
        (boards) =>
          boards.length === 0
            ? `workspace ${workspaceId} has no leaderboards`
            : table(
                ['BOARD', 'PERIODS', 'FOLLOWS', 'ENTRIES'],
                boards.map((b) => [b.board, b.periods.join(','), b.follow?.key ?? '-', b.entries.map((e) => `${e.period} ${e.entries}`).join(', ')]),
              ),
      ),
    );

  board
    .command('show')
    .description('show a page of a leaderboard, best first')
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .option('--period <period>', 'all (default), daily, weekly or monthly')
    .option('--previous', 'the period before the current one')
    .option('--asc', 'lowest score first')
    .option('--limit <n>', 'entries per page, 1-100', '20')
    .option('--after <cursor>', "the previous page's next")
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, opts: ShowOptions) =>
      run(
        opts,
        ({ ops }) =>
          ops.leaderboards.page(workspaceId, name, {
            period: opts.period,
            previous: opts.previous === true,
            order: opts.asc ? 'asc' : 'desc',
            limit: opts.limit,
            after: opts.after,
          }),
        (p) =>
          [
            `${p.board} (${p.period === 'all' ? 'all-time' : `${p.period} ${p.periodId}`})`,
            table(['RANK', 'USER', 'SCORE'], p.entries.map((e) => [String(e.rank), e.userId, String(e.score)])),
            ...(p.next === null ? [] : [`more: --after ${p.next}`]),
          ].join('\n'),
      ),
    );

  board
    .command('rank')
    .description("a player's rank and score on a leaderboard, and the entries around")
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .argument('<userId>', "the player's user id")
    .option('--period <period>', 'all (default), daily, weekly or monthly')
    .option('--previous', 'the period before the current one')
    .option('--asc', 'lowest score first')
    .option('--around <n>', 'entries above and below the player, 0-50', '0')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, userId: string, opts: RankOptions) =>
      run(
        opts,
        ({ ops }) =>
          ops.leaderboards.rank(workspaceId, name, userId, {
            period: opts.period,
            previous: opts.previous === true,
            order: opts.asc ? 'asc' : 'desc',
            around: opts.around,
          }),
        (r) =>
          [
            `${r.userId} on ${r.board} (${r.period === 'all' ? 'all-time' : `${r.period} ${r.periodId}`}): rank ${r.rank}, score ${r.score}`,
            ...(r.entries.length === 0 ? [] : [table(['RANK', 'USER', 'SCORE'], r.entries.map((e) => [String(e.rank), e.userId, String(e.score)]))]),
          ].join('\n'),
      ),
    );

  board
    .command('remove')
    .description('take one player off every period of a leaderboard (needs --yes)')
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .argument('<userId>', "the player's user id")
    .option('--yes', 'confirm: the entry cannot be brought back')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, userId: string, opts: ConfirmOptions) =>
      run(
        opts,
        ({ ops }) => ops.leaderboards.removeEntry(workspaceId, name, userId),
        (r) => (r.deleted ? `removed player ${r.userId} from ${r.board}` : `player ${r.userId} was not on ${r.board}`),
        () => confirm(opts, `Removing player ${userId} from leaderboard ${name}`),
      ),
    );

  board
    .command('reset')
    .description('empty every period of a leaderboard; its periods and follow stay (needs --yes)')
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .option('--yes', 'confirm: every entry is lost')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, opts: ConfirmOptions) =>
      run(
        opts,
        ({ ops }) => ops.leaderboards.reset(workspaceId, name),
        (r) => `reset ${r.board}: ${r.removed} entries removed`,
        () => confirm(opts, `Resetting leaderboard ${name}`),
      ),
    );

  board
    .command('delete')
    .description('delete a leaderboard, its config and every entry (needs --yes)')
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .option('--yes', 'confirm: the board and its entries are lost')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, opts: ConfirmOptions) =>
      run(
        opts,
        ({ ops }) => ops.leaderboards.delete(workspaceId, name),
        (r) => `deleted ${r.board}: ${r.removed} entries removed`,
        () => confirm(opts, `Deleting leaderboard ${name}`),
      ),
    );

  board
    .command('set-periods')
    .description('choose the periods every write of a leaderboard goes to: all, daily, weekly, monthly')
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .argument('<periods>', 'comma-separated, e.g. all,daily,weekly')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, periods: string, opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.leaderboards.setPeriods(workspaceId, name, periods),
        (r) => `${r.board} keeps ${r.periods.join(', ')}`,
        () => void parsePeriods(periods),
      ),
    );

  board
    .command('follow')
    .description("make a leaderboard follow a player key: each player's stored value is their score (docs/leaderboards.md)")
    .argument('<workspaceId>', 'workspace id')
    .argument('<board>', 'board name')
    .option('--key <key>', 'the player key to follow')
    .option('--none', 'follow no key')
    .option('--json', 'print one line of JSON')
    .action((workspaceId: string, name: string, opts: OutputOptions & { key?: string; none?: boolean }) =>
      run(
        opts,
        ({ ops }) => ops.leaderboards.follow(workspaceId, name, opts.none ? null : opts.key!),
        (r) => (r.follow ? `${r.board} follows the key ${r.follow.key}; ${r.backfilled} listed player(s) put on it` : `${r.board} follows no key`),
        () => {
          if ((opts.key === undefined) === (opts.none !== true)) throw badRequest('Give either --key <key> or --none');
        },
      ),
    );
}
