// Every `sh`/`bash` block of the README and of docs/*.md, run as written by bash against a
// service and a redis-server this test starts itself, in the order a reader would run them (one
// shell per file, so a variable set in one block is there in the next). A command's printed
// answer (the `# {...}` lines right after it) is compared with the real one; any other answer
// with `"success":false` fails the test, and so does any command that exits non-zero.
//
// What a reader fills in is filled in here, and nothing else: the quick start's addresses
// (127.0.0.1:8080, 127.0.0.1:8081, redis://127.0.0.1:6390) become the test's, and the
// placeholders `pds_...`, `ws_...`, `key_...` a fresh "Demo game" workspace's key, id and key id.
// `npm run cli -- ...` and `pds ...` run the CLI from source. A block that must not run (it
// serves until Ctrl-C, installs, needs Docker, takes minutes) is preceded by
// `<!-- not run: <reason> -->`; that list is kept short and is checked below.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminOperations } from '../../src/admin/operations.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import type { RunningService } from '../../src/server.js';
import { startTestService, testRedis } from '../support/service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_TOKEN = 'docs-example-admin-token-0123456789';
/**
 * Settings the pages say their examples run with, in the reader's shell as in the service: a
 * restore point a second (docs/history.md), so that its writes a second apart make points.
 */
const EXAMPLE_SETTINGS = { HISTORY_INTERVAL_SECONDS: '1' };
/** The service's secrets of erasure (docs/erasure.md), in the reader's shell as in the service. */
const ERASURE_SECRETS = {
  ROBLOX_WEBHOOK_SECRET: 'docs-example-webhook-secret-0123456789',
  ERASURE_DIGEST_SECRET: 'docs-example-digest-secret-0123456789',
};

export const DOC_FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

interface Command {
  readonly line: number;
  readonly text: string;
  /** The `# {...}` lines printed right after it, without the `# `. */
  readonly expected: string[];
}
interface Block {
  readonly line: number;
  readonly commands: Command[];
}
interface Skipped {
  readonly line: number;
  readonly reason: string;
}

const NOT_RUN = /^<!-- not run: (.+) -->$/;

export function shellBlocks(markdown: string): { run: Block[]; skipped: Skipped[] } {
  const lines = markdown.split('\n');
  const run: Block[] = [];
  const skipped: Skipped[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const body = lines.slice(i + 1, end);
    const lang = fence[1]!;
    const start = i;
    i = end;
    if (!['sh', 'bash', 'shell'].includes(lang)) continue;
    let prev = start - 1;
    while (prev >= 0 && lines[prev]!.trim() === '') prev--;
    const marker = prev >= 0 ? NOT_RUN.exec(lines[prev]!.trim()) : null;
    if (marker) {
      skipped.push({ line: start + 1, reason: marker[1]! });
      continue;
    }
    const commands: Command[] = [];
    for (let j = 0; j < body.length; j++) {
      const raw = body[j]!;
      if (raw.trim() === '') continue;
      if (raw.trimStart().startsWith('#')) {
        const printed = /^# ([{[].*)$/.exec(raw);
        const last = commands[commands.length - 1];
        if (printed && last) last.expected.push(printed[1]!);
        continue;
      }
      let text = raw;
      const line = start + 2 + j;
      while (text.endsWith('\\') && j + 1 < body.length) text = `${text.slice(0, -1)}${body[++j]!}`;
      commands.push({ line, text, expected: [] });
    }
    run.push({ line: start + 1, commands });
  }
  return { run, skipped };
}

/** Ids, keys and times differ from run to run; everything else must be as printed. */
function normalise(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\bpds_[A-Za-z0-9_-]{20,}/g, '<api key>')
    .replace(/\bws_[A-Za-z0-9_-]{6,}/g, '<workspace>')
    .replace(/\bkey_[A-Za-z0-9_-]{6,}/g, '<key id>');
}

function sameAnswer(actual: string, expected: string, where: string): void {
  const want = normalise(expected.trim());
  const got = normalise(actual.trim());
  let wantJson: unknown;
  try {
    wantJson = JSON.parse(want);
  } catch {
    expect(got, where).to.equal(want);
    return;
  }
  let gotJson: unknown;
  try {
    gotJson = JSON.parse(got);
  } catch {
    expect.fail(`${where}: printed JSON, got ${actual}`);
  }
  expect(elide(gotJson, wantJson), where).to.deep.equal(wantJson);
}

/** A value printed as "..." on the page stands for any value. */
function elide(got: unknown, want: unknown): unknown {
  if (want === '...') return '...';
  if (Array.isArray(want) && Array.isArray(got)) return got.map((g, i) => elide(g, want[i]));
  if (want && typeof want === 'object' && got && typeof got === 'object' && !Array.isArray(got)) {
    return Object.fromEntries(Object.entries(got).map(([k, v]) => [k, elide(v, (want as Record<string, unknown>)[k])]));
  }
  return got;
}

const PRELUDE = `
pds() { (cd "$PDS_ROOT" && node --import tsx src/cli/index.ts "$@"); }
npm() {
  if [ "$1" = run ] && [ "$2" = cli ]; then shift 2; [ "$1" = -- ] && shift; pds "$@"
  else echo "the docs test runs no 'npm $*': mark its block <!-- not run: ... -->" >&2; return 127; fi
}
`;

function runBash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['--noprofile', '--norc', '-c', script], { cwd, env, timeout: 240_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
    });
  });
}

describe('every shell example in the README and docs/ (against the service)', function () {
  this.timeout(300_000);
  let redis: LocalRedis;
  let redisDir: string;
  let service: RunningService;

  before(async () => {
    redisDir = mkdtempSync(join(tmpdir(), 'pds-docs-redis-'));
    redis = await startLocalRedis({ dataDir: redisDir, appendonly: false });
    service = await startTestService({ REDIS_URL: redis.url, ADMIN_TOKEN, ...ERASURE_SECRETS, ...EXAMPLE_SETTINGS });
  });
  after(async () => {
    await service?.close();
    await redis?.stop();
    rmSync(redisDir, { recursive: true, force: true });
  });

  it('marks only a few blocks as not run, each with its reason', () => {
    const skipped = DOC_FILES.flatMap((file) => shellBlocks(readFileSync(join(ROOT, file), 'utf8')).skipped.map((s) => ({ file, ...s })));
    for (const s of skipped) expect(s.reason.length, `${s.file}:${s.line}`).to.be.greaterThan(10);
    expect(skipped.length, JSON.stringify(skipped)).to.be.at.most(12);
  });

  for (const file of DOC_FILES) {
    const { run } = shellBlocks(readFileSync(join(ROOT, file), 'utf8'));
    if (run.length === 0) continue;
    it(`${file}: every command runs and prints what the page says`, async () => {
      const admin = testRedis(redis.url);
      const ws = await new AdminOperations(admin).createWorkspace({ name: 'Demo game', plan: 'pro' });
      await admin.quit();
      const origin = new URL(service.baseUrl).origin;
      const fill = (text: string) =>
        text
          .split('http://127.0.0.1:8080').join(origin)
          .split('http://127.0.0.1:8081').join(service.opsUrl)
          .split('redis://127.0.0.1:6390').join(redis.url)
          .split('pds_...').join(ws.apiKey)
          .split('ws_...').join(ws.workspaceId)
          .split('key_...').join(ws.keyId);

      const dir = mkdtempSync(join(tmpdir(), 'pds-docs-run-'));
      const commands = run.flatMap((b) => b.commands);
      const script = [
        PRELUDE,
        ...commands.map((c, i) => `{\n${fill(c.text)}\n} > ${dir}/${i}.out 2> ${dir}/${i}.err\necho $? > ${dir}/${i}.rc`),
      ].join('\n');
      writeFileSync(join(dir, 'script.sh'), script);
      try {
        const result = await runBash(script, dir, {
          PATH: process.env['PATH']!,
          HOME: dir,
          PDS_ROOT: ROOT,
          NODE_ENV: 'test',
          ADMIN_TOKEN,
          ...ERASURE_SECRETS,
          ...EXAMPLE_SETTINGS,
          // A page that forgets to name its Redis fails here rather than reaching 127.0.0.1:6379.
          REDIS_URL: 'redis://127.0.0.1:1',
        });
        expect(result.code, result.stderr).to.equal(0);
        commands.forEach((c, i) => {
          const where = `${file}:${c.line}: ${c.text}`;
          expect(existsSync(join(dir, `${i}.rc`)), `${where} did not run`).to.equal(true);
          const code = Number(readFileSync(join(dir, `${i}.rc`), 'utf8'));
          const out = readFileSync(join(dir, `${i}.out`), 'utf8');
          const err = readFileSync(join(dir, `${i}.err`), 'utf8');
          expect(code, `${where} exited ${code}: ${err}${out}`).to.equal(0);
          if (c.expected.length > 0) sameAnswer(out, c.expected.join('\n'), where);
          else expect(out, `${where} answered an error the page does not show`).not.to.match(/"success":\s*false/);
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
