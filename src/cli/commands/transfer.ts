// `workspace export` and `workspace import`: a workspace's players as NDJSON
// (admin/workspace-transfer.ts), with a progress bar on a terminal and a summary at the end.
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import type { ImportSummary } from '../../admin/operations.js';
import { writeWhole } from '../../admin/new-files.js';
import { DEFAULT_IMPORT_MODE, IMPORT_MODES, type WorkspaceExport } from '../../admin/workspace-transfer.js';
import { run, type OutputOptions } from '../context.js';
import { progressBar } from '../progress.js';

export interface ExportResult {
  readonly workspaceId: string;
  readonly out: string;
  readonly players: number;
  readonly keys: number;
  readonly boards: number;
  readonly boardEntries: number;
  readonly bytes: number;
  readonly ms: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Writes an export to a file (through a new temporary file beside it, renamed once complete, so
 * that a file under its own name is always whole: admin/new-files.ts) or to a stream left open
 * (stdout).
 */
export async function writeExport(exported: WorkspaceExport, out: string | NodeJS.WritableStream, showProgress: boolean): Promise<ExportResult> {
  const started = Date.now();
  const bar = progressBar(`export ${exported.workspaceId}`, 'players');
  async function* lines() {
    for await (const line of exported.lines) {
      yield line;
      if (showProgress) bar.update(exported.stats.players, exported.expectedPlayers);
    }
  }
  try {
    if (typeof out === 'string') {
      await writeWhole(out, (file) => pipeline(Readable.from(lines()), file));
    } else {
      await pipeline(Readable.from(lines()), out, { end: false });
    }
  } finally {
    bar.finish();
  }
  return { workspaceId: exported.workspaceId, out: typeof out === 'string' ? out : '-', ...exported.stats, ms: Date.now() - started };
}

export function importHuman(r: ImportSummary): string {
  const lines = [
    `${r.complete ? 'imported into' : 'NOTHING written to'} workspace ${r.workspaceId} (mode ${r.mode}) in ${seconds(r.ms)}: ` +
      `${r.lines} lines, ${r.imported} new, ${r.replaced} replaced, ${r.unchanged} unchanged, ${r.skipped} skipped, ${r.failed} failed` +
      (r.erased > 0 ? `, ${r.erased} erased (not imported: erased since the export)` : ''),
  ];
  const b = r.boards;
  if (b.imported + b.replaced + b.skipped > 0) {
    lines.push(
      `leaderboards: ${b.imported} new, ${b.replaced} replaced, ${b.skipped} skipped; ${b.entries} entries loaded` +
        (b.erased > 0 ? `, ${b.erased} left out (their players were erased)` : ''),
    );
  }
  for (const e of r.errors) lines.push(`  line ${e.line}${e.userId === undefined ? '' : ` (player ${e.userId})`}: ${e.code}: ${e.error}`);
  if (r.failed > r.errors.length) lines.push(`  ... and ${r.failed - r.errors.length} more`);
  return lines.join('\n');
}

export function transferCommands(workspace: Command): void {
  workspace
    .command('export')
    .description("write every player of a workspace as NDJSON, one line a player (docs/backups.md)")
    .argument('<workspaceId>', 'workspace id')
    .option('--out <file>', 'file to write (default: stdout)')
    .option('--json', 'print the summary as one line of JSON')
    .action((id: string, opts: OutputOptions & { out?: string }) =>
      run(
        opts,
        async ({ ops }) => writeExport(await ops.exportWorkspace(id), opts.out ?? process.stdout, true),
        (r) =>
          `exported workspace ${r.workspaceId} to ${r.out}: ${r.players} players, ${r.keys} keys, ${r.bytes} bytes in ${seconds(r.ms)}` +
          (r.boards > 0 ? `; ${r.boards} leaderboards, ${r.boardEntries} entries` : ''),
        undefined,
        process.stderr,
      ),
    );

  workspace
    .command('import')
    .description('load an NDJSON export into a workspace, the same or another (docs/backups.md)')
    .argument('<workspaceId>', 'workspace id')
    .option('--in <file>', 'file to read (default: stdin)')
    .option('--mode <mode>', `existing players: ${IMPORT_MODES.join(', ')}`, DEFAULT_IMPORT_MODE)
    .option('--json', 'print the summary as one line of JSON')
    .action(async (id: string, opts: OutputOptions & { in?: string; mode: string }) => {
      let failed = false;
      await run(
        opts,
        async ({ ops }) => {
          const total = opts.in === undefined ? undefined : (await stat(opts.in)).size;
          const bar = progressBar(`import ${id}`, 'bytes');
          try {
            const summary = await ops.importWorkspace(id, opts.in === undefined ? { stream: process.stdin } : { path: opts.in }, {
              mode: opts.mode,
              onProgress: (p) => bar.update(p.bytes, total),
            });
            failed = !summary.complete || summary.failed > 0;
            return summary;
          } finally {
            bar.finish();
          }
        },
        importHuman,
      );
      // Some lines were refused: the summary says which; a script must not take it for success.
      if (failed && !process.exitCode) process.exitCode = 1;
    });
}
