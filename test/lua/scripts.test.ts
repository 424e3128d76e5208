// The Lua scripts of lua/ as the service loads and calls them. What each script does is pinned
// through the TypeScript that calls it (src/store/), never by its bytes: an edit that keeps the
// behaviour (a comment, a faster loop, another argument layout) passes, one that changes it
// fails. The player scripts' refusals, locks and reads are here; each script also has a test
// file of its own, named `lua/<file>` (checked below).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { encodeEntry, type StoredEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { PlayerDataStore, READ_INLINE_BYTES } from '../../src/store/players/player-data.js';
import type { PlayerLimits, PlayerWrite, Refusal, SessionReply, WriteContext, WriteReply } from '../../src/store/players/script-protocol.js';
import { ErrorCode } from '../../src/errors.js';
import { LUA_DIR, SCRIPTS, preloadScripts, resolveIncludes, scriptsLoaded } from '../../src/store/redis/scripts.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const LIMITS: PlayerLimits = {
  maxKeysPerPlayer: 3,
  maxPlayerBytes: 200,
  idempotencyTtlSeconds: 60,
  history: { intervalMs: 0, maxVersions: 0, fineMs: 86_400_000, hourlyMs: 168 * 3_600_000, maxAgeMs: 0, maxBytes: 0 },
};

/** An applied write's reply, or the test fails with the refusal. */
function applied(reply: WriteReply): Extract<WriteReply, { applied: true }> {
  if (!reply.applied) throw new Error(`refused: ${JSON.stringify(reply.refusal)}`);
  return reply;
}

const refused = (refusal: Refusal): WriteReply => ({ applied: false, refusal });

/** An acquire's or renew's session, or the test fails. */
function heldSession(reply: SessionReply): Extract<SessionReply, { kind: 'held' }> {
  if (!reply.applied || reply.kind !== 'held') throw new Error(`not held: ${JSON.stringify(reply)}`);
  return reply;
}

/** Every test file's text, for the check that each script has a test of its own. */
function testSources(dir = new URL('..', import.meta.url).pathname): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testSources(path);
    return entry.name.endsWith('.test.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

describe('lua scripts', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('are every file of lua/, each loaded by scripts.ts', () => {
    const files = readdirSync(LUA_DIR).filter((f) => f.endsWith('.lua')).sort();
    expect(SCRIPTS.map((s) => s.file).sort()).to.deep.equal(files);
  });

  it('each open with a header naming KEYS, ARGV and the output', () => {
    for (const script of SCRIPTS) {
      expect(script.lua.startsWith('--[['), script.file).to.equal(true);
      // A script taking a varying number of keys names at least the first.
      for (let i = 1; i <= (script.numberOfKeys ?? 1); i++) expect(script.lua, script.file).to.include(`KEYS[${i}]`);
      expect(script.lua, script.file).to.match(/Input:/);
      expect(script.lua, script.file).to.match(/Output:/);
    }
  });

  it('each have a test file that names them (describe(\'lua/<file>\'))', () => {
    const sources = testSources();
    for (const script of SCRIPTS) {
      expect(sources.some((text) => text.includes(`describe('lua/${script.file}'`)), script.file).to.equal(true);
    }
  });

  it('have every include put in place, once each, without the included file’s header', () => {
    for (const script of SCRIPTS) {
      expect(script.lua, script.file).to.not.match(/@include/);
      for (const [, path] of script.lua.matchAll(/^-- (includes\/[a-z0-9-]+\.lua)$/gm)) {
        expect(script.lua.split(`\n-- ${path}\n`).length, `${script.file} includes ${path} once`).to.equal(2);
      }
    }
    const include = (path: string) => `--- @include "${path}"\n`;
    const twice = resolveIncludes(`${include('includes/session.lua')}${include('includes/session.lua')}`, 'test.lua');
    expect(twice.match(/local function parseSession/g)).to.have.length(1);
    expect(twice).to.not.include('Included (--- @include)');
    expect(() => resolveIncludes(include('includes/missing.lua'), 'test.lua')).to.throw(/test\.lua includes includes\/missing\.lua/);
  });

  it('share what they repeat through lua/includes/, each opening with a header', () => {
    const dir = join(LUA_DIR, 'includes');
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text.startsWith('--[['), file).to.equal(true);
      expect(text, file).to.include('Included (--- @include) by');
      expect(SCRIPTS.some((s) => s.lua.includes(`\n-- includes/${file}\n`)), `${file} is included somewhere`).to.equal(true);
    }
  });

  it('load into the script cache under the SHA1 that scripts.ts computed, so the first call needs no EVAL', async () => {
    await redis.script('FLUSH');
    expect(await scriptsLoaded(redis)).to.equal(false);
    await preloadScripts(redis);
    expect(await scriptsLoaded(redis)).to.equal(true);
    for (const script of SCRIPTS) expect(await redis.script('LOAD', script.lua), script.file).to.equal(script.sha1);
  });
});

describe('lua/read-player.lua', () => {
  let redis: Redis;
  let store: PlayerDataStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new PlayerDataStore(redis, { ...LIMITS, maxKeysPerPlayer: 1000, maxPlayerBytes: 1_000_000 });
  });
  beforeEach(() => {
    ws = randomId('ws');
  });
  after(() => redis.disconnect());

  const context: WriteContext = { nowMs: 1_700_000_000_000, kind: 'test', actor: 'key:k1' };
  const set = (key: string, value: unknown) => ({ op: 'set' as const, key, valueJson: JSON.stringify(value) });

  it('gives a player never written as complete and empty at version 0', async () => {
    expect(await store.readAll(ws, 'nobody')).to.deep.equal({ complete: true, version: 0, entries: [] });
  });

  it('gives every data key with its stored entry and the version, and no meta field', async () => {
    await store.write(ws, '1', { ops: [set('a', 1), set('b', { c: [true] })] }, context);
    await store.write(ws, '1', { ops: [set('ü', 'x')] }, context);
    await store.session(ws, '1', { action: 'acquire', sessionId: 'ses_1', owner: 'server-1', ttlMs: 60_000 });
    const read = await store.readAll(ws, '1');
    expect(read.complete).to.equal(true);
    expect(read.version).to.equal(2);
    const entries = Object.fromEntries((read as { entries: Array<[string, StoredEntry]> }).entries.map(([k, e]) => [k, e.valueJson]));
    expect(entries).to.deep.equal({ a: '1', b: '{"c":[true]}', ü: '"x"' });
  });

  it('reads a player written before versions existed (no meta) at version 1', async () => {
    await redis.hset(keys.player(ws, '2'), 'coins', encodeEntry('5', 1000));
    const read = await store.readAll(ws, '2');
    expect(read).to.deep.include({ complete: true, version: 1 });
    expect((read as { entries: unknown[] }).entries).to.have.length(1);
  });

  it('gives only the size of a player larger than asked for, whole one within it (also past the inline size)', async () => {
    const big = 'x'.repeat(READ_INLINE_BYTES);
    await store.write(ws, '3', { ops: [set('big', big), set('small', 1)] }, context);
    const refused = await store.readAll(ws, '3', 1000);
    expect(refused).to.deep.include({ complete: false, version: 1, keys: 2 });
    expect((refused as { bytes: number }).bytes).to.be.greaterThan(READ_INLINE_BYTES);
    const whole = await store.readAll(ws, '3');
    expect(whole).to.deep.include({ complete: true, version: 1 });
    expect((whole as { entries: Array<[string, unknown]> }).entries.map(([k]) => k).sort()).to.deep.equal(['big', 'small']);
  });
});

describe('lua/player-session.lua', () => {
  let redis: Redis;
  let store: PlayerDataStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new PlayerDataStore(redis, LIMITS);
  });
  beforeEach(() => {
    ws = randomId('ws');
  });
  after(() => redis.disconnect());

  const redisMs = async () => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  const acquire = (userId: string, sessionId: string, owner: string, steal = false) =>
    store.session(ws, userId, { action: 'acquire', sessionId, owner, ttlMs: 60_000, steal });

  it('acquires a free player for a lease on Redis’s clock, and refuses another owner while it lives', async () => {
    const before = await redisMs();
    const { reply } = await acquire('1', 'ses_a', 'server-a');
    const held = heldSession(reply);
    expect([reply.applied, held.version, held.session.sessionId, held.session.owner]).to.deep.equal([true, 0, 'ses_a', 'server-a']);
    expect(held.session.expiresAtMs).to.be.within(before + 60_000, (await redisMs()) + 60_000);
    const locked = await acquire('1', 'ses_b', 'server-b');
    expect(locked.reply).to.deep.equal({
      applied: false,
      refusal: { code: ErrorCode.SESSION_LOCKED, version: 0, owner: 'server-a', expiresAtMs: held.session.expiresAtMs },
    });
    expect((await store.sessionOf(ws, '1')).session).to.deep.include({ sessionId: 'ses_a', owner: 'server-a' });
  });

  it('lets the same owner acquire again (a new id), and a steal take it from another', async () => {
    await acquire('2', 'ses_a', 'server-a');
    expect((await acquire('2', 'ses_a2', 'server-a')).reply.applied).to.equal(true);
    expect(heldSession((await acquire('2', 'ses_b', 'server-b', true)).reply).session).to.deep.include({ sessionId: 'ses_b', owner: 'server-b' });
    expect((await store.sessionOf(ws, '2')).session?.sessionId).to.equal('ses_b');
  });

  it('renews only the holder’s id (SESSION_LOST for any other), keeping its lease when none is given', async () => {
    await acquire('3', 'ses_a', 'server-a');
    await acquire('3', 'ses_b', 'server-b', true);
    expect((await store.session(ws, '3', { action: 'renew', sessionId: 'ses_a' })).reply).to.deep.equal({
      applied: false,
      refusal: { code: ErrorCode.SESSION_LOST, version: 0 },
    });
    const before = await redisMs();
    const renewed = heldSession((await store.session(ws, '3', { action: 'renew', sessionId: 'ses_b' })).reply);
    expect([renewed.version, renewed.session.sessionId, renewed.session.owner]).to.deep.equal([0, 'ses_b', 'server-b']);
    expect(renewed.session.expiresAtMs).to.be.within(before + 60_000, (await redisMs()) + 60_000);
    const longer = heldSession((await store.session(ws, '3', { action: 'renew', sessionId: 'ses_b', ttlMs: 600_000 })).reply);
    expect(longer.session.expiresAtMs).to.be.greaterThan(before + 590_000);
  });

  it('releases only for the holder’s id', async () => {
    await acquire('4', 'ses_a', 'server-a');
    expect((await store.session(ws, '4', { action: 'release', sessionId: 'ses_x' })).reply).to.deep.equal({
      applied: true,
      kind: 'released',
      version: 0,
      released: false,
    });
    expect((await store.sessionOf(ws, '4')).session).to.not.equal(undefined);
    const released = (await store.session(ws, '4', { action: 'release', sessionId: 'ses_a' })).reply;
    expect(released).to.deep.include({ applied: true, kind: 'released', version: 0, released: true });
    // A player without data leaves the held players of its workspace's totals (lua/includes/session.lua).
    expect(released.applied && released.held?.length).to.equal(1);
    expect((await store.sessionOf(ws, '4')).session).to.equal(undefined);
    expect((await acquire('4', 'ses_b', 'server-b')).reply.applied).to.equal(true);
  });

  it('treats an expired lease as free', async () => {
    await store.session(ws, '5', { action: 'acquire', sessionId: 'ses_a', owner: 'server-a', ttlMs: 30 });
    await new Promise((r) => setTimeout(r, 60));
    const held = heldSession((await acquire('5', 'ses_b', 'server-b')).reply);
    expect([held.version, held.session.sessionId]).to.deep.equal([0, 'ses_b']);
  });

  it('gives a player written before versions existed its meta, as a write would', async () => {
    const hash = keys.player(ws, '6');
    await redis.hset(hash, 'coins', encodeEntry('5', 1000));
    expect(heldSession((await acquire('6', 'ses_a', 'server-a')).reply).version).to.equal(1);
    expect(await redis.hmget(hash, '\0v', '\0n', '\0b')).to.deep.equal(['1', '1', String('coins'.length + encodeEntry('5', 1000).length)]);
  });

  it('replays the first answer for an idempotency key, and refuses the key with another request', async () => {
    const idem = { keyHash: randomId('idem'), fingerprint: 'fp-1' };
    const first = await store.session(ws, '7', { action: 'acquire', sessionId: 'ses_a', owner: 'server-a', ttlMs: 60_000 }, idem);
    const again = await store.session(ws, '7', { action: 'acquire', sessionId: 'ses_z', owner: 'server-z', ttlMs: 60_000 }, idem);
    // The replay is the first answer, raw as kept, and keeps nothing more.
    expect(again).to.deep.equal({ reply: first.reply, replayed: true, raw: first.raw, keptBytes: 0 });
    expect(first.keptBytes).to.be.above(0);
    const other = await store.session(ws, '7', { action: 'release', sessionId: 'ses_a' }, { ...idem, fingerprint: 'fp-2' });
    expect(other.reply).to.deep.equal({ applied: false, refusal: { code: ErrorCode.IDEMPOTENCY_KEY_REUSED } });
    expect((await store.sessionOf(ws, '7')).session?.sessionId).to.equal('ses_a');
  });
});

describe('lua/write-player.lua: refusals, locks and replays (through PlayerDataStore.write)', () => {
  let redis: Redis;
  let store: PlayerDataStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new PlayerDataStore(redis, LIMITS);
  });
  beforeEach(() => {
    ws = randomId('ws');
  });
  after(() => redis.disconnect());

  const context: WriteContext = { nowMs: 1_700_000_000_000, kind: 'test', actor: 'key:k1' };
  const write = (userId: string, w: PlayerWrite, ctx: WriteContext = context) => store.write(ws, userId, w, ctx);
  const set = (key: string, value: unknown) => ({ op: 'set' as const, key, valueJson: JSON.stringify(value) });
  const data = (userId: string) => redis.hgetall(keys.player(ws, userId));

  it('applies a set, an increment and a delete in one step, answering each op', async () => {
    const first = applied((await write('1', { ops: [set('a', 'x'), { op: 'increment', key: 'n', amount: 2, defaultValue: 40 }] })).reply);
    // Applied, version 1, one player more; a set answers its time, an increment its new value.
    expect([first.version, first.storage.players, ...first.results]).to.deep.equal([1, 1, String(context.nowMs), '42']);
    const reply = applied((await write('1', { ops: [{ op: 'delete', key: 'a' }, { op: 'delete', key: 'missing' }] })).reply);
    expect([reply.version, ...reply.results]).to.deep.equal([2, '1', '0']);
    expect(Object.keys(await data('1')).filter((f) => !f.startsWith('\0'))).to.deep.equal(['n']);
  });

  it('applies a write only at the expected version (VERSION_CONFLICT with the current one)', async () => {
    await write('2', { ops: [set('a', 1)] });
    expect((await write('2', { ops: [set('a', 2)], ifVersion: 0 })).reply).to.deep.equal(refused({ code: ErrorCode.VERSION_CONFLICT, version: 1 }));
    expect(applied((await write('2', { ops: [set('a', 2)], ifVersion: 1 })).reply).version).to.equal(2);
  });

  it('refuses a key past the most keys (TOO_MANY_KEYS) and bytes past the most bytes (PLAYER_TOO_LARGE), writing nothing', async () => {
    await write('3', { ops: [set('a', 1), set('b', 1), set('c', 1)] });
    const before = await data('3');
    expect((await write('3', { ops: [set('a', 2), set('d', 1)] })).reply).to.deep.equal(refused({ code: ErrorCode.TOO_MANY_KEYS, version: 1 }));
    const tooBig = (await write('3', { ops: [set('a', 'x'.repeat(200))] })).reply;
    const refusal = tooBig.applied ? undefined : tooBig.refusal;
    expect(refusal).to.deep.include({ code: ErrorCode.PLAYER_TOO_LARGE, version: 1 });
    expect(refusal?.code === ErrorCode.PLAYER_TOO_LARGE && refusal.bytes).to.be.greaterThan(LIMITS.maxPlayerBytes);
    expect(await data('3')).to.deep.equal(before);
    // Replacing keys within the limits is fine.
    expect((await write('3', { ops: [set('a', 2), { op: 'delete', key: 'b' }, set('d', 1)] })).reply.applied).to.equal(true);
  });

  it('refuses a result that is not a finite number (NUMBER_OUT_OF_RANGE)', async () => {
    await write('4', { ops: [set('n', 1.7976931348623157e308)] });
    expect((await write('4', { ops: [{ op: 'increment', key: 'n', amount: 1e308, defaultValue: 0 }] })).reply).to.deep.equal(
      refused({ code: ErrorCode.NUMBER_OUT_OF_RANGE, version: 1, opIndex: 0 }),
    );
  });

  it('while a session holds the player: no id is SESSION_LOCKED, another id SESSION_LOST, the holder’s id writes and may release', async () => {
    await write('5', { ops: [set('a', 1)] });
    const acquired = heldSession((await store.session(ws, '5', { action: 'acquire', sessionId: 'ses_a', owner: 'server-a', ttlMs: 60_000 })).reply);
    expect((await write('5', { ops: [set('a', 2)] })).reply).to.deep.equal(
      refused({ code: ErrorCode.SESSION_LOCKED, version: 1, owner: 'server-a', expiresAtMs: acquired.session.expiresAtMs }),
    );
    expect((await write('5', { ops: [set('a', 2)], sessionId: 'ses_old' })).reply).to.deep.equal(refused({ code: ErrorCode.SESSION_LOST, version: 1 }));
    expect(applied((await write('5', { ops: [set('a', 2)], sessionId: 'ses_a', release: true })).reply).version).to.equal(2);
    expect((await store.sessionOf(ws, '5')).session).to.equal(undefined);
    // Released: a write without an id applies again, and a write with the old id is SESSION_LOST.
    expect((await write('5', { ops: [set('a', 3)] })).reply.applied).to.equal(true);
    expect((await write('5', { ops: [set('a', 4)], sessionId: 'ses_a' })).reply).to.deep.equal(refused({ code: ErrorCode.SESSION_LOST, version: 3 }));
  });

  it('replays the first answer for an idempotency key (refusals included), and refuses the key with another request', async () => {
    const idem = { keyHash: randomId('idem'), fingerprint: 'fp-1' };
    const first = await write('6', { ops: [{ op: 'increment', key: 'n', amount: 1, defaultValue: 0 }] }, { ...context, idempotency: idem });
    const again = await write('6', { ops: [{ op: 'increment', key: 'n', amount: 1, defaultValue: 0 }] }, { ...context, idempotency: idem });
    expect(again).to.deep.equal({ reply: first.reply, replayed: true, raw: first.raw, keptBytes: 0 });
    expect(await store.get(ws, '6', 'n')).to.deep.include({ found: true, version: 1 });
    const reused = await write('6', { ops: [set('n', 5)] }, { ...context, idempotency: { ...idem, fingerprint: 'fp-2' } });
    expect(reused.reply).to.deep.equal(refused({ code: ErrorCode.IDEMPOTENCY_KEY_REUSED }));
    const conflict = { keyHash: randomId('idem'), fingerprint: 'fp-3' };
    const firstRefusal = await write('6', { ops: [set('n', 5)], ifVersion: 7 }, { ...context, idempotency: conflict });
    expect(firstRefusal.reply).to.deep.equal(refused({ code: ErrorCode.VERSION_CONFLICT, version: 1 }));
    expect(await write('6', { ops: [set('n', 5)], ifVersion: 7 }, { ...context, idempotency: conflict })).to.deep.equal({
      reply: firstRefusal.reply,
      replayed: true,
      raw: firstRefusal.raw,
      keptBytes: 0,
    });
  });

  it('deletes every data key at once, keeping the meta', async () => {
    await write('7', { ops: [set('a', 1), set('b', 2)] });
    expect(applied((await write('7', { ops: [], deleteAll: true })).reply).version).to.equal(2);
    expect(Object.keys(await data('7')).filter((f) => !f.startsWith('\0'))).to.deep.equal([]);
    expect((await store.get(ws, '7', 'a'))).to.deep.equal({ found: false, playerExists: false, version: 2 });
  });
});
