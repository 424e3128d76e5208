// `key ...` commands. Raw keys are printed only when a key is made (create, rotate), once.
import type { Command } from 'commander';
import type { KeyView } from '../../admin/operations.js';
import { confirm, run, table, type ConfirmOptions, type OutputOptions } from '../context.js';

export function keyTable(keys: readonly KeyView[]): string {
  if (keys.length === 0) return 'no keys';
  return table(
    ['KEY ID', 'PREFIX', 'SCOPE', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES', 'LABEL'],
    keys.map((k) => [
      k.keyId,
      `${k.prefix}…`,
      k.scope,
      k.status,
      k.createdAt,
      k.lastUsedAt ?? 'never',
      k.expiresAt ?? 'never',
      k.label ?? '',
    ]),
  );
}

export function keyCommands(program: Command): void {
  const key = program.command('key').description('manage API keys');

  key
    .command('create')
    .description('create an API key for a workspace (the key is shown once)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--scope <scope>', 'read (ping and read only) or write (everything)', 'write')
    .option('--label <text>', 'a note to tell keys apart, e.g. "game server EU"')
    .option('--expires-in <duration>', 'expire after this long: 30m, 12h, 90d, 2w (bare number: seconds)')
    .option('--expires-at <time>', 'expire at this ISO 8601 time, e.g. 2030-01-31T00:00:00Z')
    .option('--json', 'print one line of JSON')
    .action(
      (opts: OutputOptions & { workspace: string; scope: string; label?: string; expiresIn?: string; expiresAt?: string }) =>
        run(
          opts,
          ({ ops }) =>
            ops.createKey(opts.workspace, {
              scope: opts.scope,
              label: opts.label,
              expiresIn: opts.expiresIn,
              expiresAt: opts.expiresAt,
            }),
          (r) =>
            [
              `key id:  ${r.keyId} (${r.scope}${r.expiresAt ? `, expires ${r.expiresAt}` : ''})`,
              `API key: ${r.apiKey}`,
              'Store the API key now: it is not shown again.',
            ].join('\n'),
        ),
    );

  key
    .command('list')
    .description('list the API keys of a workspace (never the raw keys)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace: string }) =>
      run(opts, ({ ops }) => ops.listKeys(opts.workspace), keyTable),
    );

  key
    .command('revoke')
    .description('revoke an API key at once, on every instance (needs --yes)')
    .argument('<keyId>', 'key id, as shown by key list')
    .option('--yes', 'confirm: this cannot be undone')
    .option('--json', 'print one line of JSON')
    .action((keyId: string, opts: ConfirmOptions) =>
      run(
        opts,
        ({ ops }) => ops.revokeKey(keyId),
        (r) => `revoked ${r.keyId} (${r.prefix}…) of workspace ${r.workspaceId}`,
        () => confirm(opts, `Revoking ${keyId}`),
      ),
    );

  key
    .command('rotate')
    .description('issue a new key in place of an old one; the old one works for --grace, then stops (needs --yes)')
    .argument('<keyId>', 'key id of the key to replace')
    .option('--grace <duration>', 'how long the old key keeps working: 0 (default, stops now), 30m, 24h, 7d', '0')
    .option('--yes', 'confirm: the old key stops working')
    .option('--json', 'print one line of JSON')
    .action((keyId: string, opts: ConfirmOptions & { grace: string }) =>
      run(
        opts,
        ({ ops }) => ops.rotateKey(keyId, { grace: opts.grace }),
        (r) =>
          [
            `new key id: ${r.key.keyId} (${r.key.scope})`,
            `API key:    ${r.key.apiKey}`,
            'Store the API key now: it is not shown again.',
            r.previous.status === 'revoked'
              ? `old key ${r.previous.keyId} is revoked`
              : `old key ${r.previous.keyId} keeps working until ${r.previous.expiresAt}`,
          ].join('\n'),
        () => confirm(opts, `Rotating ${keyId}`),
      ),
    );
}
