// The right to erasure on the command line: `player erase`, `erasure list|show|dismiss`, and
// `workspace set-games|games|set-erasure-players|erasure-players` (admin/erasures.ts). `player erase` records the job and runs it
// in this process, showing its progress on a terminal; when a service instance's worker has it
// already, it follows that worker's progress instead.
import type { Command } from 'commander';
import { badRequest } from '../../errors.js';
import type { ErasureJobView } from '../../erasure/job-record.js';
import type { ErasureList } from '../../admin/operations.js';
import { confirm, run, table, type ConfirmOptions, type OutputOptions } from '../context.js';

function describeJob(job: ErasureJobView): string {
  const p = job.progress;
  const where = 'workspaceId' in job.scope ? `workspace ${job.scope.workspaceId}` : 'allWorkspaces' in job.scope ? 'every workspace' : `games ${job.scope.gameIds.join(', ')}`;
  const lines = [
    `erasure ${job.jobId}: ${job.state} (${where}; requested by ${job.requestedBy} at ${job.requestedAt})`,
    `  user digest ${job.user}`,
    `  progress: ${p.phase}, ${p.workspacesDone}/${p.workspacesTotal} workspaces, ${p.keysDeleted} keys deleted, ${job.attempts} attempt(s)`,
  ];
  if (job.workspaces.length > 0) lines.push(`  workspaces: ${job.workspaces.join(', ')}`);
  if (job.unmappedGames.length > 0) lines.push(`  games no workspace serves (map them with \`workspace set-games\`): ${job.unmappedGames.join(', ')}`);
  if (job.lastError) lines.push(`  last error: ${job.lastError}${job.nextAttemptAt ? ` (retried from ${job.nextAttemptAt})` : ''}`);
  if (job.doneAt) lines.push(`  done at ${job.doneAt}`);
  return lines.join('\n');
}

function describeList(list: ErasureList): string {
  const c = list.counts;
  return [
    `erasures: ${c.requested} requested, ${c.done} done; now ${c.pending} pending, ${c.failed} failed, ${c.unmapped} unmapped`,
    list.jobs.length === 0
      ? 'no jobs'
      : table(
          ['JOB', 'STATE', 'REQUESTED', 'BY', 'WORKSPACES', 'KEYS', 'USER DIGEST'],
          list.jobs.map((j) => [j.jobId, j.state, j.requestedAt, j.requestedBy, String(j.workspaces.length), String(j.progress.keysDeleted), j.user.slice(0, 16)]),
        ),
  ].join('\n');
}

export function eraseCommand(player: Command): void {
  player
    .command('erase')
    .description("erase a player everywhere its data is, in one workspace or all of them, for good (needs --yes; docs/erasure.md)")
    .argument('<userId>', "the player's user id")
    .option('--workspace <id>', 'the workspace to erase the player in')
    .option('--all-workspaces', 'erase the player in every workspace')
    .option('--yes', 'confirm: this cannot be undone, and backups will not bring the player back')
    .option('--json', 'print the finished job as one line of JSON')
    .action(async (userId: string, opts: ConfirmOptions & { workspace?: string; allWorkspaces?: boolean }) => {
      let failed = false;
      await run(
        opts,
        async ({ ops }) => {
          const job = await ops.erasures.request({ userId, workspaceId: opts.workspace, allWorkspaces: opts.allWorkspaces });
          const live = !opts.json && process.stderr.isTTY;
          const show = (j: ErasureJobView) => {
            if (live) process.stderr.write(`\r${j.jobId}: ${j.progress.phase}, ${j.progress.workspacesDone}/${j.progress.workspacesTotal} workspaces, ${j.progress.keysDeleted} keys deleted\u001b[K`);
          };
          const finished = await ops.erasures.run(job.jobId, show);
          if (live) process.stderr.write('\r\u001b[K');
          failed = finished.state !== 'done';
          return finished;
        },
        describeJob,
        () => {
          if (Boolean(opts.workspace) === Boolean(opts.allWorkspaces)) throw badRequest('Give --workspace <id> or --all-workspaces (one of them)');
          confirm(opts, `Erasing player ${userId}`);
        },
      );
      // Recorded but not finished (a failed attempt is retried by the service's workers): say so by the exit code.
      if (failed && !process.exitCode) process.exitCode = 1;
    });
}

export function erasureCommands(program: Command): void {
  const erasure = program.command('erasure').description('erasure jobs: the counts, the jobs, their progress (docs/erasure.md)');

  erasure
    .command('list')
    .description('the counts and the newest jobs')
    .option('--state <state>', 'only jobs in this state: pending, failed, unmapped, done')
    .option('--user <userId>', "only this user's jobs (found by the id's digest)")
    .option('--limit <n>', 'jobs to show, 1-500', '50')
    .option('--json', 'print one line of JSON')
    .action((opts: OutputOptions & { state?: string; user?: string; limit: string }) =>
      run(opts, ({ ops }) => ops.erasures.list({ state: opts.state, userId: opts.user, limit: opts.limit }), describeList),
    );

  erasure
    .command('show')
    .description('one job and its progress')
    .argument('<jobId>', 'the job id (er_...)')
    .option('--json', 'print one line of JSON')
    .action((jobId: string, opts: OutputOptions) => run(opts, ({ ops }) => ops.erasures.show(jobId), describeJob));

  erasure
    .command('dismiss')
    .description('end a job waiting for games no workspace will serve: its user id is dropped (needs --yes)')
    .argument('<jobId>', 'the job id (er_...)')
    .option('--yes', 'confirm: the request is not erased in any workspace mapped later')
    .option('--json', 'print one line of JSON')
    .action((jobId: string, opts: ConfirmOptions) =>
      run(opts, ({ ops }) => ops.erasures.dismiss(jobId), describeJob, () => confirm(opts, `Dismissing erasure ${jobId}`)),
    );
}

export function gamesCommands(workspace: Command): void {
  workspace
    .command('set-games')
    .description("set the platform's games (universe ids) the workspace serves, replacing its list; none clears it (docs/erasure.md)")
    .argument('<workspaceId>', 'workspace id')
    .argument('[gameIds...]', 'game ids')
    .option('--json', 'print one line of JSON')
    .action((id: string, gameIds: string[], opts: OutputOptions) =>
      run(
        opts,
        ({ ops }) => ops.erasures.setGames(id, gameIds),
        (r) =>
          `workspace ${r.workspaceId} serves ${r.gameIds.length === 0 ? 'no game' : `games ${r.gameIds.join(', ')}`}` +
          (r.requeued.length > 0 ? `\nerasure jobs that waited for these games, run again now: ${r.requeued.join(', ')}` : ''),
      ),
    );

  workspace
    .command('games')
    .description("the platform's games the workspace serves")
    .argument('<workspaceId>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((id: string, opts: OutputOptions) =>
      run(opts, ({ ops }) => ops.erasures.gamesOf(id), (r) => `workspace ${r.workspaceId} serves ${r.gameIds.length === 0 ? 'no game' : `games ${r.gameIds.join(', ')}`}`),
    );

  const describePlayers = (r: { workspaceId: string; templates: string[] }) =>
    `in workspace ${r.workspaceId}, an erasure of a user id erases the player {userId}` +
    (r.templates.length === 0 ? ' only' : ` and the players ${r.templates.join(', ')}`);

  workspace
    .command('set-erasure-players')
    .description('set the players an erasure of a user id also erases in the workspace, as templates (Player_{userId}), replacing the list; none clears it (docs/erasure.md)')
    .argument('<workspaceId>', 'workspace id')
    .argument('[templates...]', 'templates holding {userId} once: Player_{userId} PlayerData_v2..Player_{userId}')
    .option('--json', 'print one line of JSON')
    .action((id: string, templates: string[], opts: OutputOptions) =>
      run(opts, ({ ops }) => ops.erasures.setErasurePlayers(id, templates), describePlayers),
    );

  workspace
    .command('erasure-players')
    .description('the players an erasure of a user id also erases in the workspace (templates)')
    .argument('<workspaceId>', 'workspace id')
    .option('--json', 'print one line of JSON')
    .action((id: string, opts: OutputOptions) => run(opts, ({ ops }) => ops.erasures.erasurePlayersOf(id), describePlayers));
}
