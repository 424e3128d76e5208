// Two game servers racing for one player through sessions, over random interleavings of acquire,
// steal, write, expiry, release and retries: every answer is what a model of the lock predicts,
// and the player's counter ends equal to the writes that were acknowledged (none lost, none
// applied twice).
import { expect } from 'chai';
import fc from 'fast-check';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService, type ApiResponse } from '../support/service.js';

type Server = 'A' | 'B';
type Action =
  | { kind: 'acquire'; server: Server; steal: boolean }
  | { kind: 'write'; server: Server; withSession: boolean }
  | { kind: 'both-write' }
  | { kind: 'retry' }
  | { kind: 'expire' }
  | { kind: 'release'; server: Server };

const server = fc.constantFrom<Server>('A', 'B');
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('acquire' as const), server, steal: fc.boolean() }),
  fc.record({ kind: fc.constant('write' as const), server, withSession: fc.boolean() }),
  fc.constant({ kind: 'both-write' as const }),
  fc.constant({ kind: 'retry' as const }),
  fc.constant({ kind: 'expire' as const }),
  fc.record({ kind: fc.constant('release' as const), server }),
);

describe('safe saves: two servers racing for one player (property)', function () {
  this.timeout(120_000);
  const t = useService();

  it('acknowledges exactly the writes it applies, and only the holder\'s', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 5, maxLength: 25 }), async (actions) => {
        const ws = await newWorkspace(t.redis);
        const api = client(t.service, ws.apiKey);
        const userId = `racer${run++}`;
        // The model: who holds the player (by session id), what each server believes it holds.
        let holder: { server: Server; sessionId: string } | undefined;
        const known: Record<Server, string | undefined> = { A: undefined, B: undefined };
        let applied = 0;
        let lastWrite: { body: object; key: string; answer: ApiResponse } | undefined;
        let writes = 0;

        const write = (s: Server, withSession: boolean) => {
          const body = { userId, key: 'coins', amount: 1, ...(withSession && known[s] ? { sessionId: known[s] } : {}) };
          const key = `w-${run}-${writes++}`;
          return { body, key, sent: 'sessionId' in body ? (body.sessionId as string) : undefined, answer: api.post('/data/increment', body, { headers: { 'Idempotency-Key': key } }) };
        };
        const expected = (sent: string | undefined) =>
          holder ? (sent === holder.sessionId ? 200 : sent === undefined ? 'SESSION_LOCKED' : 'SESSION_LOST') : sent === undefined ? 200 : 'SESSION_LOST';
        const check = (answer: ApiResponse, outcome: 200 | string) => {
          if (outcome === 200) {
            expect(answer.status, answer.text).to.equal(200);
            applied++;
            expect(answer.body.value).to.equal(applied);
          } else {
            expect(answer.body.code, answer.text).to.equal(outcome);
          }
        };

        for (const a of actions) {
          if (a.kind === 'acquire') {
            const res = await api.post('/sessions/acquire', { userId, owner: `job-${a.server}`, steal: a.steal });
            if (holder && holder.server !== a.server && !a.steal) {
              expect(res.body.code, res.text).to.equal('SESSION_LOCKED');
              expect(res.body.data.owner).to.equal(`job-${holder.server}`);
            } else {
              expect(res.status, res.text).to.equal(200);
              holder = { server: a.server, sessionId: res.body.data.sessionId };
              known[a.server] = res.body.data.sessionId;
            }
          } else if (a.kind === 'write') {
            const w = write(a.server, a.withSession);
            const outcome = expected(w.sent);
            const answer = await w.answer;
            check(answer, outcome);
            lastWrite = { body: w.body, key: w.key, answer };
          } else if (a.kind === 'both-write') {
            // Both servers at once: only the holder's write may land, whatever the order.
            const [wa, wb] = [write('A', true), write('B', true)];
            const [ra, rb] = await Promise.all([wa.answer, wb.answer]);
            const oa = expected(wa.sent);
            const ob = expected(wb.sent);
            if (oa === 200 && ob === 200) {
              // No holder, neither sent a session: both land, in either order.
              expect([ra.status, rb.status]).to.deep.equal([200, 200]);
              applied += 2;
              expect([ra.body.value, rb.body.value].sort((x, y) => x - y)).to.deep.equal([applied - 1, applied]);
            } else {
              check(ra, oa);
              check(rb, ob);
            }
          } else if (a.kind === 'retry') {
            if (!lastWrite) continue;
            const again = await api.post('/data/increment', lastWrite.body, { headers: { 'Idempotency-Key': lastWrite.key } });
            expect(again.status).to.equal(lastWrite.answer.status);
            expect(again.text).to.equal(lastWrite.answer.text);
          } else if (a.kind === 'expire') {
            const hash = keys.player(ws.workspaceId, userId);
            const session = await t.redis.hget(hash, '\0s');
            if (session) {
              const [id, , ttl, owner] = session.split('|');
              await t.redis.hset(hash, '\0s', `${id}|${Date.now() - 1}|${ttl}|${owner}`);
            }
            holder = undefined;
          } else {
            const sent = known[a.server];
            if (!sent) continue;
            const res = await api.post('/sessions/release', { userId, sessionId: sent });
            expect(res.status).to.equal(200);
            if (holder?.sessionId === sent) {
              expect(res.body.data.released).to.equal(true);
              holder = undefined;
            }
          }
        }
        const final = await api.get(`/data?userId=${userId}&key=coins`);
        if (applied === 0) expect(final.status).to.equal(404);
        else expect(final.body.data.value, 'every acknowledged write applied exactly once').to.equal(applied);
      }),
      { numRuns: 40 },
    );
  });
});
