// Messages to players over random interleavings of sends, acquires (with and without load,
// stealing or not), saves that apply what they were handed and acknowledge it (some whose answer
// is lost and retried with their Idempotency-Key, some releasing, two servers at once), crashes,
// lease expiry and message expiry. Each message's effect is its own counter: at the end, after
// one last server takes the player and processes what waits, every message was applied exactly
// once, except one that expired before it was acknowledged, which was applied at most once.
import { expect } from 'chai';
import fc from 'fast-check';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService, type ApiResponse } from '../support/service.js';

type Server = 'A' | 'B';
type Action =
  | { kind: 'send' }
  | { kind: 'acquire'; server: Server; steal: boolean; load: boolean }
  | { kind: 'save'; server: Server; lostAnswer: boolean; release: boolean }
  | { kind: 'both-save' }
  | { kind: 'crash'; server: Server }
  | { kind: 'expire-lease' }
  | { kind: 'expire-message'; pick: number };

const server = fc.constantFrom<Server>('A', 'B');
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'send' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('acquire' as const), server, steal: fc.boolean(), load: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('save' as const), server, lostAnswer: fc.boolean(), release: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'both-save' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), server }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire-lease' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire-message' as const), pick: fc.nat(20) }) },
);

interface Held {
  sessionId: string;
  /** Messages handed to this server and not yet applied: id -> the message's number. */
  pending: Map<string, number>;
}

type Message = { id: string; message: { n: number } };

describe('safe saves: messages processed exactly once (property)', function () {
  this.timeout(180_000);
  const t = useService();

  it('applies every message once across steals, crashes, lost answers and expiry', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 5, maxLength: 30 }), async (actions) => {
        const ws = await newWorkspace(t.redis);
        const api = client(t.service, ws.apiKey);
        const userId = `p${run++}`;
        const inbox = keys.playerInbox(ws.workspaceId, userId);
        const servers: Record<Server | 'C', Held | undefined> = { A: undefined, B: undefined, C: undefined };
        let sent = 0;
        let saves = 0;
        /** Messages forced to expire: they may be applied once, or never. */
        const mayBeLost = new Set<number>();

        const take = (held: Held, messages: Message[] | undefined) => {
          for (const m of messages ?? []) {
            expect(held.pending.has(m.id), `message ${m.id} handed twice to one session`).to.equal(false);
            held.pending.set(m.id, m.message.n);
          }
        };
        const acquire = async (s: Server | 'C', steal: boolean, load: boolean) => {
          const res = await api.post('/sessions/acquire', { userId, owner: `job-${s}`, steal, load });
          if (res.status !== 200) {
            expect(res.body.code, res.text).to.equal('SESSION_LOCKED');
            return;
          }
          // A new session: whatever this server held before is gone with its old session.
          const held: Held = { sessionId: res.body.data.sessionId, pending: new Map() };
          take(held, res.body.data.messages);
          servers[s] = held;
        };
        const save = async (s: Server | 'C', lostAnswer: boolean, release: boolean): Promise<void> => {
          const held = servers[s];
          if (!held) return;
          const applying = [...held.pending];
          const body = {
            userId,
            sessionId: held.sessionId,
            release,
            ops: applying.map(([, n]) => ({ op: 'increment', key: `got_${n}`, amount: 1 })),
            ackMessages: applying.map(([id]) => id),
          };
          const headers = { 'Idempotency-Key': `save-${run}-${saves++}` };
          let res: ApiResponse = await api.post('/data/batch', body, { headers });
          if (lostAnswer) {
            // The answer never arrived: the server retries with the same key and gets the first answer.
            const again = await api.post('/data/batch', body, { headers });
            expect(again.text).to.equal(res.text);
            res = again;
          }
          if (res.status === 200) {
            held.pending.clear();
            if (release) servers[s] = undefined;
            else {
              take(held, res.body.data.messages);
              // Nothing waits that the holder was not handed: what waits is what it holds unapplied.
              const waiting = (await api.get(`/messages?userId=${userId}`)).body.data.messages as Message[];
              expect(waiting.map((m) => m.id).sort(), 'every waiting message handed to the holder').to.deep.equal([...held.pending.keys()].sort());
            }
          } else {
            // Fenced off (stolen, or its lease passed): nothing of it landed; it forgets the player.
            expect(res.body.code, res.text).to.equal('SESSION_LOST');
            servers[s] = undefined;
          }
        };

        for (const a of actions) {
          if (a.kind === 'send') {
            const res = await api.post('/messages', { userId, message: { n: sent++ } });
            expect(res.status, res.text).to.equal(200);
          } else if (a.kind === 'acquire') {
            await acquire(a.server, a.steal, a.load);
          } else if (a.kind === 'save') {
            await save(a.server, a.lostAnswer, a.release);
          } else if (a.kind === 'both-save') {
            await Promise.all([save('A', false, false), save('B', false, false)]);
          } else if (a.kind === 'crash') {
            servers[a.server] = undefined;
          } else if (a.kind === 'expire-lease') {
            const hash = keys.player(ws.workspaceId, userId);
            const session = await t.redis.hget(hash, '\0s');
            if (session) {
              const [id, , ttl, owner] = session.split('|');
              await t.redis.hset(hash, '\0s', `${id}|${Date.now() - 1}|${ttl}|${owner}`);
            }
          } else {
            const waiting = Object.entries(await t.redis.hgetall(inbox)).filter(([f]) => f !== '#');
            if (waiting.length === 0) continue;
            const [id, value] = waiting[a.pick % waiting.length]!;
            const [sentAt, , json] = value.split('|');
            mayBeLost.add((JSON.parse(json!) as { n: number }).n);
            await t.redis.hset(inbox, id, `${sentAt}|${Date.now() - 1}|${json}`);
          }
        }

        // One last server takes the player and processes everything that waits.
        await acquire('C', true, true);
        await save('C', false, true);
        const waitingAfter = await api.get(`/messages?userId=${userId}`);
        expect(waitingAfter.body.data.messages).to.deep.equal([]);
        const all = await api.get(`/data?userId=${userId}`);
        const values: Record<string, number> = all.status === 200 ? all.body.data : {};
        for (let n = 0; n < sent; n++) {
          const got = values[`got_${n}`] ?? 0;
          if (mayBeLost.has(n)) expect(got, `message ${n} (expired) applied at most once`).to.be.at.most(1);
          else expect(got, `message ${n} applied exactly once`).to.equal(1);
        }
        expect(Object.keys(values).filter((k) => !/^got_\d+$/.test(k))).to.deep.equal([]);
      }),
      { numRuns: 40 },
    );
  });
});
