// `pds export --all --out DIR` and `pds import --all --in DIR`: the whole installation to a
// folder and back (admin/installation-backup.ts). Top-level commands, as issue 18 names them,
// with --all required: a command that copies everything should say so on the command line, and
// `workspace export`/`import` stay the commands for one workspace.
import type { Command } from 'commander';
import { badRequest } from '../../errors.js';
import { COLLISION_OPTIONS, DEFAULT_COLLISION_OPTION, parseCollisionOption } from '../../admin/backup-collisions.js';
import { DEFAULT_IMPORT_MODE, IMPORT_MODES } from '../../admin/workspace-transfer.js';
import { run, type OutputOptions } from '../context.js';
import { progressBar } from '../progress.js';
import { importHuman } from './transfer.js';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function requireAll(opts: { all?: boolean }, what: string): void {
  if (!opts.all) throw badRequest(`${what} needs --all (the whole installation); for one workspace use \`workspace ${what}\``);
}

export function backupCommands(program: Command): void {
  program
    .command('export')
    .description('write the whole installation (workspaces, plans, key hashes, bans, erasure player names, games, players) to a new folder (docs/backups.md)')
    .option('--all', 'the whole installation (required)')
    .requiredOption('--out <dir>', 'a new or empty folder')
    .option('--json', 'print the manifest as one line of JSON')
    .action((opts: OutputOptions & { all?: boolean; out: string }) =>
      run(
        opts,
        async ({ ops }) => {
          const bar = progressBar('export', 'players');
          const perWorkspace = new Map<string, number>();
          let total = 0;
          try {
            return await ops.exportInstallation(opts.out, (p) => {
              total += p.players - (perWorkspace.get(p.workspaceId) ?? 0);
              perWorkspace.set(p.workspaceId, p.players);
              bar.update(total);
            });
          } finally {
            bar.finish();
          }
        },
        (m) =>
          `exported to ${m.dir} in ${seconds(m.ms)}: ${m.counts.workspaces} workspaces, ${m.counts.apiKeys} API keys, ` +
          `${m.counts.bans} bans, ${m.counts.allowEntries} allow-list entries, ${m.counts.games ?? 0} games, ` +
          `${m.counts.erasurePlayers ?? 0} erasure player names, ${m.counts.players} players, ${m.counts.keys} keys`,
        () => requireAll(opts, 'export'),
      ),
    );

  program
    .command('import')
    .description('load a folder written by `export --all` into this installation, checked against its manifest first (docs/backups.md)')
    .option('--all', 'the whole installation (required)')
    .requiredOption('--in <dir>', 'the backup folder')
    .option('--mode <mode>', `existing players: ${IMPORT_MODES.join(', ')}`, DEFAULT_IMPORT_MODE)
    .option(
      '--on-collision <what>',
      `a workspace id of the backup that is another workspace here: ${COLLISION_OPTIONS.join(', ')} (refuse writes nothing and lists them)`,
      DEFAULT_COLLISION_OPTION,
    )
    .option('--json', 'print the summary as one line of JSON')
    .action(async (opts: OutputOptions & { all?: boolean; in: string; mode: string; onCollision: string }) => {
      let failed = false;
      await run(
        opts,
        async ({ ops }) => {
          const bar = progressBar('import', 'workspaces');
          let workspaces = 0;
          try {
            const result = await ops.importInstallation(opts.in, {
              mode: opts.mode,
              onCollision: opts.onCollision,
              onProgress: () => bar.update(++workspaces),
            });
            failed = result.players.some((s) => !s.complete || s.failed > 0);
            return result;
          } finally {
            bar.finish();
          }
        },
        (r) =>
          [
            `imported ${r.dir} in ${seconds(r.ms)}: workspaces ${r.workspaces.created} new, ${r.workspaces.existing} existing; ` +
              `API keys ${r.apiKeys.created} new, ${r.apiKeys.existing} existing; bans ${r.bans.created} new; allow-list ${r.allowEntries.created} new; ` +
              `${r.players.reduce((n, s) => n + s.erased, 0)} players not imported because they were erased since the backup`,
            ...r.renamed.map((w) => `workspace ${w.from} restored as ${w.to}: its id is another workspace's here (its keys open ${w.to})`),
            ...r.skipped.map((id) => `workspace ${id} skipped: its id is another workspace's here (neither it nor its keys restored)`),
            `games ${r.games.created} new, ${r.games.existing} existing; erasure player names of ${r.erasurePlayers.created} workspaces new, ${r.erasurePlayers.existing} existing`,
            ...r.gamesServedElsewhere.map(
              (g) => `game ${g.gameId} not mapped to workspace ${g.workspaceId}: workspace ${g.servedBy} serves it here (kept; \`workspace set-games\` moves it)`,
            ),
            ...r.players.map(importHuman),
          ].join('\n'),
        () => {
          requireAll(opts, 'import');
          parseCollisionOption(opts.onCollision);
        },
      );
      if (failed && !process.exitCode) process.exitCode = 1;
    });
}
