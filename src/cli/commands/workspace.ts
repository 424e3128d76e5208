// `workspace ...` commands.
import type { Command } from 'commander';
import { AppError, ErrorCode } from '../../errors.js';
import { confirm, run, table, type ConfirmOptions, type OutputOptions } from '../context.js';
import { transferCommands } from './transfer.js';
import { gamesCommands } from './erasure.js';
import { keyTable } from './key.js';

export function workspaceCommands(program: Command): void {
  const workspace = program.command('workspace').description('manage workspaces');

  workspace
    .command('create')
    .description('create a workspace and its first API key (the key is shown once)')
    .requiredOption('--name <name>', 'workspace name')
    .option('--plan <plan>', 'free or pro', 'free')
    .option('--id <id>', 'workspace id (default: generated)')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { name: string; plan: string; id?: string }) =>
      run(
        opts,
        ({ ops }) => ops.createWorkspace({ name: opts.name, plan: opts.plan, id: opts.id }),
        (r) =>
          [
            `workspace ${r.workspaceId} "${r.name}" (${r.plan})`,
            `key id:  ${r.keyId}`,
            `API key: ${r.apiKey}`,
            'Store the API key now: it is not shown again.',
          ].join('\n'),
      ),
    );

  workspace
    .command('list')
    .description('list every workspace')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.listWorkspaces(),
        (list) =>
          list.length === 0
            ? 'no workspaces'
            : table(['ID', 'PLAN', 'CREATED', 'NAME'], list.map((w) => [w.id, w.plan, w.createdAt, w.name])),
      ),
    );

  workspace
    .command('show')
    .description('show a workspace and its keys')
    .argument('<id>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((id: string, opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.showWorkspace(id),
        (w) =>
          [
            `workspace ${w.id} "${w.name}"`,
            `plan:    ${w.plan}`,
            `created: ${w.createdAt}`,
            `keys:    ${w.keys.length} (${w.keys.filter((k) => k.status === 'active').length} active)`,
            `storage: ${w.storage.bytes} bytes in ${w.storage.players} players (quota ${w.storage.quotaBytes} bytes)`,
            '',
            keyTable(w.keys),
          ].join('\n'),
      ),
    );

  workspace
    .command('rename')
    .description('rename a workspace (seen by ping on every instance at once)')
    .argument('<id>', 'workspace id')
    .requiredOption('--name <name>', 'new name')
    .option('--json', 'print one line of JSON')
    .action((id: string, opts: OutputOptions & { name: string }) =>
      run(
        opts,
        ({ ops }) => ops.renameWorkspace(id, opts.name),
        (w) => `workspace ${w.id} is now "${w.name}"`,
      ),
    );

  workspace
    .command('set-plan')
    .description("change a workspace's plan (its limit changes from the next request, on every instance)")
    .argument('<id>', 'workspace id')
    .argument('<plan>', 'free or pro')
    .option('--json', 'print one line of JSON')
    .action((id: string, plan: string, opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.setPlan(id, plan),
        (w) => `workspace ${w.id} is now on the ${w.plan} plan`,
      ),
    );

  workspace
    .command('delete')
    .description('delete a workspace with all its keys and all its players\' data (needs --yes; safe to re-run)')
    .argument('<id>', 'workspace id')
    .option('--yes', 'confirm: this cannot be undone')
    .option('--force', 'sweep even if the workspace is gone (leftovers of an earlier deletion)')
    .option('--json', 'print one line of JSON')
    .action((id: string, opts: ConfirmOptions & { force?: boolean }) =>
      run(
        opts,
        async ({ ops }) => {
          let shown = false;
          const result = await ops
            .deleteWorkspace(id, {
              force: opts.force === true,
              onProgress: (p) => {
                if (opts.json || p.phase !== 'players') return;
                process.stderr.write(`\rplayers deleted: ${p.done}`);
                shown = true;
              },
            })
            // Safe to re-run: a workspace already gone is what the operator asked for.
            .catch((err: unknown) => {
              if (err instanceof AppError && err.code === ErrorCode.NOT_FOUND) return undefined;
              throw err;
            });
          if (shown) process.stderr.write('\n');
          return result ?? { workspaceId: id, keysDeleted: 0, playersDeleted: 0, alreadyGone: true };
        },
        (r) =>
          'alreadyGone' in r
            ? `workspace ${r.workspaceId} is already gone (deleted earlier, or never existed): nothing to delete`
            : `deleted workspace ${r.workspaceId}: ${r.keysDeleted} keys, ${r.playersDeleted} players`,
        () => confirm(opts, `Deleting workspace ${id} and all its data`),
      ),
    );

  transferCommands(workspace);
  gamesCommands(workspace);
}
