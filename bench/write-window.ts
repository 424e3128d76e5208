// `npx tsx bench/write-window.ts [rounds]`: a pro workspace sends its plan's whole window at once,
// 300 sets to distinct players (issue 38, item 11), against a private Redis and the real service
// in a child process (the default REDIS_COMMAND_TIMEOUT_MS, 1 s); a new workspace each round.
// Prints one JSON line per round: the answers by status and code. Run it beside CPU load (as
// docs/reliability.md, "A workspace's whole window at once", did) to see the turn wait run out.
import { AdminOperations } from '../src/admin/operations.js';
import { runMain } from './lib/bench-redis.js';
import { againstService } from './lib/service-run.js';

const WRITES = 300;

runMain('bench:write-window', async () => {
  const rounds = Number(process.argv[2] ?? 5);
  await againstService('write-window', {}, async (baseUrl, _pid, redis) => {
    const ops = new AdminOperations(redis, { actor: 'write-window' });
    for (let round = 1; round <= rounds; round++) {
      const ws = await ops.createWorkspace({ name: `window-${round}`, plan: 'pro' });
      const headers = { 'content-type': 'application/json', 'x-api-key': ws.apiKey };
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: WRITES }, async (_, i) => {
          const res = await fetch(`${baseUrl}/data/set`, { method: 'POST', headers, body: JSON.stringify({ userId: `p${i}`, key: 'k', value: i }) });
          const body = (await res.json()) as { code?: string; error?: string };
          // The plan's limit and the write turn both answer RATE_LIMITED: told apart by the message.
          const turn = body.code === 'RATE_LIMITED' ? (/more writes at once/.test(body.error ?? '') ? ' (turn)' : ' (plan or budget)') : '';
          return `${res.status}${body.code ? ` ${body.code}${turn}` : ''}`;
        }),
      );
      const counts: Record<string, number> = {};
      for (const a of answers) counts[a] = (counts[a] ?? 0) + 1;
      console.log(JSON.stringify({ round, ms: Math.round(performance.now() - started), ...counts }));
    }
  });
});
