// Platform-only access from the command line: `ban list|show|add|remove`, `ban allow
// list|add|remove`, `violations`, and `key set-dev` to mark development keys.
import type { Command } from 'commander';
import type { BanRecord, ViolationRecord } from '../../domain/ban.js';
import { badRequest } from '../../errors.js';
import { run, type OutputOptions } from '../context.js';

function banLine(b: BanRecord): string {
  const why = b.note ?? b.reasons.join(', ');
  const who = b.evidence?.workspaceId ? `  workspace ${b.evidence.workspaceId}` : '';
  return `${b.address}  since ${b.bannedAt}  by ${b.source}: ${why}${who}`;
}

function banDetail(b: BanRecord): string {
  const lines = [banLine(b)];
  if (b.evidence) {
    const e = b.evidence;
    lines.push(`  request:    ${e.method} ${e.path}`);
    lines.push(`  user agent: ${e.userAgent ?? '(none)'}`);
    lines.push(`  roblox-id:  ${e.robloxId ?? '(none)'}`);
    if (e.keyId) lines.push(`  key:        ${e.keyId} of workspace ${e.workspaceId}`);
    for (const [name, value] of Object.entries(e.headers)) lines.push(`  ${name}: ${value}`);
    lines.push(`  headers:    ${e.headerNames.join(' ')}`);
  }
  return lines.join('\n');
}

function violationLine(v: ViolationRecord): string {
  const ws = v.evidence.workspaceId ? `  workspace ${v.evidence.workspaceId}` : '';
  const why = v.notBanned ? `  (not banned: ${v.notBanned})` : '';
  return `${v.at}  ${v.address ?? '(unknown)'}  ${v.outcome}  ${v.reasons.join(',')}  ${v.evidence.method} ${v.evidence.path}  ua="${v.evidence.userAgent ?? ''}"${ws}${why}`;
}

function parseLimit(raw: string): number {
  const n = Number(raw);
  return Number.isInteger(n) ? n : NaN;
}

export function banCommands(program: Command): void {
  const ban = program.command('ban').description('platform-only access: banned addresses and the allow-list');

  ban
    .command('list')
    .description('list banned addresses, one page at a time, in address order')
    .option('--limit <n>', 'bans per page (1 to 1000)', '100')
    .option('--after <cursor>', 'start after this address: the "next" of the page before')
    .option('--json', 'print one line of JSON: {bans, next}')
    .action((opts: OutputOptions & { limit: string; after?: string }) =>
      run(
        opts,
        ({ bans }) => bans.pageBans({ limit: parseLimit(opts.limit), after: opts.after }),
        (page) => {
          const lines = page.bans.length === 0 ? ['no bans'] : page.bans.map(banLine);
          if (page.next !== null) lines.push(`more: ban list --after ${page.next}`);
          return lines.join('\n');
        },
      ),
    );

  ban
    .command('show')
    .description('show one ban with its evidence')
    .argument('<address>', 'IPv4 or IPv6 address')
    .option('--json', 'print one line of JSON')
    .action((address: string, opts: OutputOptions) => run(opts, ({ bans }) => bans.getBan(address), banDetail));

  ban
    .command('add')
    .description('ban an address by hand, on every instance at once')
    .argument('<address>', 'IPv4 or IPv6 address (an IPv6 address bans its /64)')
    .option('--reason <text>', 'why (kept with the ban)')
    .option('--json', 'print one line of JSON')
    .action((address: string, opts: OutputOptions & { reason?: string }) =>
      run(opts, ({ bans }) => bans.addBan({ address, reason: opts.reason }), (b) => `banned ${banLine(b)}`),
    );

  ban
    .command('remove')
    .description('lift a ban, on every instance at once')
    .argument('<address>', 'IPv4 or IPv6 address')
    .option('--json', 'print one line of JSON')
    .action((address: string, opts: OutputOptions) =>
      run(opts, ({ bans }) => bans.removeBan(address), (b) => `lifted the ban on ${b.address} (banned ${b.bannedAt})`),
    );

  const allow = ban.command('allow').description('addresses and ranges that are never banned (your own monitoring)');

  allow
    .command('list')
    .description('list the allow-list')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions) =>
      run(
        opts,
        ({ bans }) => bans.allowList(),
        (entries) => (entries.length === 0 ? 'allow-list is empty' : entries.map((e) => `${e.entry}  since ${e.addedAt}${e.note ? `  ${e.note}` : ''}`).join('\n')),
      ),
    );

  allow
    .command('add')
    .description('allow-list an address or range; lifts the bans it covers')
    .argument('<entry>', 'address or range, such as 203.0.113.0/24')
    .option('--note <text>', 'whose address this is')
    .option('--json', 'print one line of JSON')
    .action((entry: string, opts: OutputOptions & { note?: string }) =>
      run(
        opts,
        ({ bans }) => bans.allow({ entry, note: opts.note }),
        (r) => `allow-listed ${r.entry}${r.lifted.length > 0 ? `; lifted the bans on ${r.lifted.join(', ')}` : ''}`,
      ),
    );

  allow
    .command('remove')
    .description('remove an entry from the allow-list')
    .argument('<entry>', 'address or range, as listed')
    .option('--json', 'print one line of JSON')
    .action((entry: string, opts: OutputOptions) =>
      run(opts, ({ bans }) => bans.disallow(entry), (r) => `removed ${r.entry} from the allow-list`),
    );

  program
    .command('violations')
    .description('recent platform-only access violations, newest first')
    .option('--limit <n>', 'how many', '50')
    .option('--address <address>', 'only this address')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { limit: string; address?: string }) =>
      run(
        opts,
        ({ bans }) => bans.violations({ limit: parseLimit(opts.limit), ...(opts.address ? { address: opts.address } : {}) }),
        (list) => (list.length === 0 ? 'no violations recorded' : list.map(violationLine).join('\n')),
      ),
    );

  // `key set-dev` joins the `key` group when it exists (registered before this one).
  const key = program.commands.find((c) => c.name() === 'key') ?? program.command('key').description('manage API keys');
  key
    .command('set-dev')
    .description('mark a key as a development key (editor play-tests may use it), or back as production')
    .argument('<keyId>', 'key id, as shown by key list')
    .option('--on', 'development key')
    .option('--off', 'production key')
    .option('--json', 'print one line of JSON')
    .action((keyId: string, opts: OutputOptions & { on?: boolean; off?: boolean }) =>
      run(
        opts,
        async ({ bans }) => {
          if (Boolean(opts.on) === Boolean(opts.off)) throw badRequest('give exactly one of --on or --off');
          return bans.setKeyDev(keyId, Boolean(opts.on));
        },
        (r) => `${r.keyId} of workspace ${r.workspaceId} is now a ${r.dev ? 'development' : 'production'} key`,
      ),
    );
}
