// GET /data of a large player (over READ_INLINE_BYTES) is built from Redis's reply Buffers:
// its answer must be byte for byte the answer built from the values as text, for keys and
// values with multi-byte UTF-8, escapes and nesting, with the meta fields left out.
import { expect } from 'chai';
import { decodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { READ_INLINE_BYTES } from '../../src/store/players/player-data.js';
import { client, newWorkspace, useService } from '../support/service.js';

const KEYS_AND_VALUES: Array<[string, unknown]> = [
  ['plain', 100],
  ['42', 'an integer-like key, first in an object'],
  ['ключ 🎮 日本', 'héllo wörld ✓ 🎮 日本'],
  ['a"b\\c/\u2028', 'a"b\\c\n\t\u0001\u2028'],
  ['__proto__', { inv: [{ id: 1, tags: ['ä', 'b'], meta: { x: null, y: [[1], [2, [3]]] } }], ok: true }],
  ['\u00a0 space', [1.5e300, -0, 0.1, true, false, null, {}, []]],
  ['lone surrogate \ud800', '\udc00 half'],
];

describe('GET /data of a large player: the bytes', () => {
  const t = useService();

  async function rawGet(key: string, userId: string): Promise<{ status: number; bytes: Buffer; type: string | null }> {
    const res = await fetch(`${t.service.baseUrl}/data?userId=${encodeURIComponent(userId)}`, { headers: { 'x-api-key': key } });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
  }

  /** The answer built the way the text path builds it, from HGETALL read as strings. */
  async function expectedAnswer(workspaceId: string, userId: string): Promise<Buffer> {
    const all = await t.redis.hgetall(keys.player(workspaceId, userId));
    const members: string[] = [];
    for (const [field, stored] of Object.entries(all)) {
      if (field.startsWith('\0')) continue;
      members.push(`${JSON.stringify(field)}:${decodeEntry(stored)!.valueJson}`);
    }
    const version = all['\0v'] ?? '1';
    return Buffer.from(`{"success":true,"data":{${members.join(',')}},"version":${version}}`, 'utf8');
  }

  it('is byte for byte the text answer, small and large', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    for (const [key, value] of KEYS_AND_VALUES) {
      expect((await api.post('/data/set', { userId: 'p', key, value })).status).to.equal(200);
    }
    const small = await rawGet(ws.apiKey, 'p');
    expect(small.status).to.equal(200);
    // The small path (the read script) lists keys in the hash's order, the text path of a large
    // player in the order of ioredis's HGETALL object (integer-like keys first), as before.
    expect(JSON.parse(small.bytes.toString('utf8'))).to.deep.equal(JSON.parse((await expectedAnswer(ws.workspaceId, 'p')).toString('utf8')));

    // Past the inline size: the bulk path, several versions later.
    const pad = 'é'.repeat(READ_INLINE_BYTES / 2 + 10);
    expect((await api.post('/data/set', { userId: 'p', key: 'pad ✓', value: { pad } })).status).to.equal(200);
    expect((await api.post('/data/set', { userId: 'p', key: 'plain', value: 101 })).status).to.equal(200);
    const large = await rawGet(ws.apiKey, 'p');
    expect(large.status, large.bytes.toString()).to.equal(200);
    expect(large.type).to.equal('application/json; charset=utf-8');
    const expected = await expectedAnswer(ws.workspaceId, 'p');
    expect(large.bytes.length).to.be.greaterThan(READ_INLINE_BYTES);
    expect(large.bytes.equals(expected), 'the large answer differs from the text answer').to.equal(true);
    const parsed = JSON.parse(large.bytes.toString('utf8')) as { data: Record<string, unknown>; version: number };
    expect(parsed.version).to.equal(KEYS_AND_VALUES.length + 2);
    expect(Object.keys(parsed.data)).to.have.length(KEYS_AND_VALUES.length + 1);
    expect(parsed.data['ключ 🎮 日本']).to.equal('héllo wörld ✓ 🎮 日本');
  });

  it('answers a large player written before versions (no meta) with version 1', async () => {
    const ws = await newWorkspace(t.redis);
    const hash = keys.player(ws.workspaceId, 'old');
    await t.redis.hset(hash, 'k ✓', `[1700000000000,${JSON.stringify('x'.repeat(READ_INLINE_BYTES))}]`, 'n', '[1700000000000,{"a":[1]}]');
    const res = await rawGet(ws.apiKey, 'old');
    expect(res.status).to.equal(200);
    expect(res.bytes.equals(await expectedAnswer(ws.workspaceId, 'old'))).to.equal(true);
  });

  it('answers 500 in the envelope, not a broken answer, for a corrupt large entry', async () => {
    const ws = await newWorkspace(t.redis);
    const hash = keys.player(ws.workspaceId, 'bad');
    await t.redis.hset(hash, 'k', `[1700000000000,${JSON.stringify('x'.repeat(READ_INLINE_BYTES))}]`, 'broken', 'not an entry');
    const res = await rawGet(ws.apiKey, 'bad');
    expect(res.status).to.equal(500);
    expect(JSON.parse(res.bytes.toString())).to.include({ success: false, code: 'INTERNAL' });
  });
});
