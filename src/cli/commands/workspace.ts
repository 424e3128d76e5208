// `workspace ...` commands.
import type { Command } from 'commander';
import { run, type OutputOptions } from '../context.js';

export function workspaceCommands(program: Command): void {
  const workspace = program.command('workspace').description('manage workspaces');

  workspace
    .command('create')
    .description('create a workspace and its first API key (the key is shown once)')
    .requiredOption('--name <name>', 'workspace name')
    .option('--plan <plan>', 'free or pro', 'free')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { name: string; plan: string }) =>
      run(
        opts,
        ({ ops }) => ops.createWorkspace({ name: opts.name, plan: opts.plan }),
        (r) =>
          [
            `workspace ${r.workspaceId} "${r.name}" (${r.plan})`,
            `key id:  ${r.keyId}`,
            `API key: ${r.apiKey}`,
            'Store the API key now: it is not shown again.',
          ].join('\n'),
      ),
    );
}
