// `usage` and `audit`: what a workspace consumed, and who did what.
import type { Command } from 'commander';
import { run, table, type OutputOptions } from '../context.js';

export function usageCommands(program: Command): void {
  program
    .command('usage')
    .description('requests and 429s per day, players with data, and when each key was last used')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--days <n>', 'how many days back, 1-31', '30')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace: string; days: string }) =>
      run(
        opts,
        ({ ops }) => ops.usage(opts.workspace, opts.days),
        (r) =>
          [
            `workspace ${r.workspaceId} "${r.name}" (${r.plan})`,
            `players with data: ${r.players}`,
            `requests: ${r.totals.requests} in ${r.days.length} days, ${r.totals.limited} refused with 429`,
            '',
            table(['DAY (UTC)', 'REQUESTS', '429'], r.days.map((d) => [d.date, String(d.requests), String(d.limited)])),
            '',
            table(
              ['KEY ID', 'STATUS', 'LAST USED', 'LABEL'],
              r.keys.map((k) => [k.keyId, k.status, k.lastUsedAt ?? 'never', k.label ?? '']),
            ),
          ].join('\n'),
      ),
    );

  program
    .command('audit')
    .description('the audit trail of admin actions, newest first')
    .option('--workspace <id>', 'only actions on this workspace')
    .option('--limit <n>', 'how many entries', '50')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { workspace?: string; limit: string }) =>
      run(
        opts,
        ({ ops }) => ops.readAudit({ limit: opts.limit, workspaceId: opts.workspace }),
        (entries) =>
          entries.length === 0
            ? 'no audit entries'
            : table(
                ['TIME', 'ACTOR', 'ACTION', 'TARGET', 'DETAILS'],
                entries.map((e) => [e.at, e.actor, e.action, e.target, e.details ? JSON.stringify(e.details) : '']),
              ),
      ),
    );
}
