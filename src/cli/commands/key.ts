// `key ...` commands. Raw keys are printed only by `key create`, once.
import type { Command } from 'commander';
import { run, type OutputOptions } from '../context.js';

export function keyCommands(program: Command): void {
  const key = program.command('key').description('manage API keys');

  key
    .command('create')
    .description('create an API key for a workspace (the key is shown once)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace: string }) =>
      run(
        opts,
        ({ ops }) => ops.createKey(opts.workspace),
        (r) => `key id:  ${r.keyId}\nAPI key: ${r.apiKey}\nStore the API key now: it is not shown again.`,
      ),
    );

  key
    .command('revoke')
    .description('revoke an API key at once, on every instance')
    .argument('<keyId>', 'key id, as shown by key list')
    .option('--json', 'print one line of JSON')
    .action((keyId: string, opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.revokeKey(keyId),
        (r) => `revoked ${r.keyId} (${r.prefix}…) of workspace ${r.workspaceId}`,
      ),
    );

  key
    .command('list')
    .description('list the API keys of a workspace (never the raw keys)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace: string }) =>
      run(
        opts,
        ({ ops }) => ops.listKeys(opts.workspace),
        (keys) =>
          keys.length === 0
            ? 'no keys'
            : keys.map((k) => `${k.keyId}  ${k.prefix}…  ${k.scope}  ${k.status}  created ${k.createdAt}`).join('\n'),
      ),
    );
}
