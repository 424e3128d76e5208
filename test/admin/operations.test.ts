// AdminOperations on a real Redis: every workspace and key transition, input checks, the audit
// trail, support access to one player's data.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import type { Redis } from 'ioredis';
import { AppError } from '../../src/errors.js';
import { startLocalRedis } from '../../src/dev/local-redis.js';
import { keys } from '../../src/store/keys.js';
import { testOps } from '../support/admin.js';
import { newWorkspace, testRedis } from '../support/service.js';

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the operation to fail').to.be.instanceOf(AppError);
  return err as AppError;
}

describe('AdminOperations', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  describe('workspaces', () => {
    it('create, list, show, rename, set-plan, each visible in the next read', async () => {
      const ops = testOps(redis);
      const created = await ops.createWorkspace({ name: '  Studio A  ', plan: 'free' });
      expect(created).to.include({ name: 'Studio A', plan: 'free' });
      expect(created.apiKey).to.match(/^pds_/);

      const listed = await ops.listWorkspaces();
      expect(listed.map((w) => w.id)).to.include(created.workspaceId);

      expect((await ops.renameWorkspace(created.workspaceId, 'Studio B')).name).to.equal('Studio B');
      expect((await ops.setPlan(created.workspaceId, 'pro')).plan).to.equal('pro');
      const shown = await ops.showWorkspace(created.workspaceId);
      expect(shown).to.include({ id: created.workspaceId, name: 'Studio B', plan: 'pro' });
      expect(shown.keys.map((k) => k.keyId)).to.deep.equal([created.keyId]);
    });

    it('refuses bad names and plans with 400, unknown workspaces with 404, taken ids with 409', async () => {
      const ops = testOps(redis);
      expect((await failure(ops.createWorkspace({ name: '   ' }))).status).to.equal(400);
      expect((await failure(ops.createWorkspace({ name: 'x'.repeat(101) }))).status).to.equal(400);
      expect((await failure(ops.createWorkspace({ name: 'ok', plan: 'gold' }))).message).to.match(/free, pro/);
      expect((await failure(ops.createWorkspace({ name: 'ok', id: 'bad{id}' }))).status).to.equal(400);
      const ws = await newWorkspace(redis);
      expect((await failure(ops.createWorkspace({ name: 'ok', id: ws.workspaceId }))).status).to.equal(409);
      expect((await failure(ops.setPlan(ws.workspaceId, 'enterprise'))).status).to.equal(400);
      expect((await failure(ops.renameWorkspace(ws.workspaceId, ''))).status).to.equal(400);
      for (const missing of [ops.showWorkspace('ws_nope'), ops.setPlan('ws_nope', 'pro'), ops.deleteWorkspace('ws_nope')]) {
        expect((await failure(missing)).status).to.equal(404);
      }
    });
  });

  describe('keys', () => {
    it('create with label, scope and expiry; list shows them and never the raw key', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis);
      const made = await ops.createKey(ws.workspaceId, { scope: 'read', label: 'dashboard', expiresIn: '7d' });
      expect(made).to.include({ scope: 'read', label: 'dashboard', workspaceId: ws.workspaceId });
      const list = await ops.listKeys(ws.workspaceId);
      const view = list.find((k) => k.keyId === made.keyId)!;
      expect(view).to.include({ scope: 'read', label: 'dashboard', status: 'active', lastUsedAt: null, prefix: made.apiKey.slice(0, 10) });
      expect(view.expiresAt).to.equal(made.expiresAt);
      expect(JSON.stringify(list)).not.to.include(made.apiKey);
      expect(JSON.stringify(list)).not.to.include(ws.apiKey);
    });

    it('refuses a bad scope, a past or malformed expiry, both expiry forms, an over-long label', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis);
      for (const options of [
        { scope: 'admin' },
        { expiresAt: '2001-01-01T00:00:00Z' },
        { expiresAt: 'tomorrow' },
        { expiresIn: '3 days' },
        { expiresIn: '0' },
        { expiresIn: '1h', expiresAt: '2099-01-01T00:00:00Z' },
        { label: 'x'.repeat(101) },
      ]) {
        expect((await failure(ops.createKey(ws.workspaceId, options))).status, JSON.stringify(options)).to.equal(400);
      }
      expect((await failure(ops.createKey('ws_missing'))).status).to.equal(404);
      expect((await failure(ops.revokeKey('key_missing'))).status).to.equal(404);
      expect((await failure(ops.rotateKey('key_missing'))).status).to.equal(404);
    });

    it('revoke is idempotent and shows in the list', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis);
      expect((await ops.revokeKey(ws.keyId)).status).to.equal('revoked');
      expect((await ops.revokeKey(ws.keyId)).status).to.equal('revoked');
      expect((await ops.listKeys(ws.workspaceId))[0]!.status).to.equal('revoked');
    });

    it('rotation with grace never extends an earlier expiry', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis);
      const key = await ops.createKey(ws.workspaceId, { expiresIn: '10m' });
      const rotated = await ops.rotateKey(key.keyId, { grace: '7d' });
      expect(rotated.previous.expiresAt).to.equal(key.expiresAt);
      const shorter = await ops.rotateKey(rotated.key.keyId, { grace: '1m' });
      expect(Date.parse(shorter.previous.expiresAt!)).to.be.closeTo(Date.now() + 60_000, 5000);
    });
  });

  describe('audit trail', () => {
    it('records who did what to which target, newest first, filterable by workspace', async () => {
      const ops = testOps(redis, { actor: 'cli:alice' });
      const ws = await ops.createWorkspace({ name: 'Audited' });
      const key = await ops.createKey(ws.workspaceId, { label: 'k2' });
      await ops.setPlan(ws.workspaceId, 'pro');
      await ops.rotateKey(key.keyId, { grace: '1h' });
      await ops.revokeKey(ws.keyId);
      await ops.setPlayerValue(ws.workspaceId, 7, 'coins', 1);

      const entries = await ops.readAudit({ workspaceId: ws.workspaceId, limit: 10 });
      expect(entries.map((e) => e.action)).to.deep.equal([
        'player.set',
        'key.revoke',
        'key.rotate',
        'workspace.set-plan',
        'key.create',
        'workspace.create',
      ]);
      expect(entries.every((e) => e.actor === 'cli:alice' && e.workspaceId === ws.workspaceId)).to.equal(true);
      expect(entries[3]!.details).to.deep.equal({ from: 'free', to: 'pro' });
      expect(entries[1]!.target).to.equal(`key:${ws.keyId}`);
      expect(Date.now() - Date.parse(entries[0]!.at)).to.be.within(0, 60_000);
      // Neither raw keys nor player values reach the trail.
      const raw = await redis.lrange(keys.auditLog(), 0, 50);
      expect(raw.join('\n')).not.to.include(ws.apiKey);
      expect(raw.join('\n')).not.to.include(key.apiKey);
    });

    it('keeps at most AUDIT_MAX_ENTRIES entries', async () => {
      // The trail is one list for the whole Redis: trim it only on a private server, never on
      // a shared one that REDIS_URL may name.
      const dataDir = mkdtempSync(join(tmpdir(), 'pds-audit-'));
      const server = await startLocalRedis({ dataDir, appendonly: false });
      const own = testRedis(server.url);
      try {
        const ops = testOps(own, { config: loadConfig({ AUDIT_MAX_ENTRIES: '10' }) });
        const ws = await newWorkspace(own);
        for (let i = 0; i < 15; i++) await ops.renameWorkspace(ws.workspaceId, `name ${i}`);
        expect(await own.llen(keys.auditLog())).to.equal(10);
        const newest = await ops.readAudit({ limit: 1 });
        expect(newest[0]!.details).to.deep.equal({ from: 'name 13', to: 'name 14' });
      } finally {
        own.disconnect();
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('one player for support staff', () => {
    it('exports every key exactly as the public read returns it, __proto__ included', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis);
      for (const key of ['__proto__', 'constructor', 'prototype', 'coins']) await ops.setPlayerValue(ws.workspaceId, 1, key, { k: key });
      const exported = await ops.exportPlayer(ws.workspaceId, 1);
      expect(Object.keys(exported.data).sort()).to.deep.equal(['__proto__', 'coins', 'constructor', 'prototype']);
      expect(JSON.parse(JSON.stringify(exported)).data['__proto__'].value).to.deep.equal({ k: '__proto__' });
      expect(Object.getPrototypeOf(exported.data)).to.equal(Object.prototype);
    });

    it('set, get, export, delete a key, delete all; values round-trip', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis);
      await ops.setPlayerValue(ws.workspaceId, '42', 'inventory', { items: ['sword', 'shield'], gold: 3 });
      await ops.setPlayerValue(ws.workspaceId, 42, 'level', 7);
      expect((await ops.getPlayerValue(ws.workspaceId, '42', 'level')).value).to.equal(7);
      const exported = await ops.exportPlayer(ws.workspaceId, 42);
      expect(exported.userId).to.equal('42');
      expect(exported.data['inventory']!.value).to.deep.equal({ items: ['sword', 'shield'], gold: 3 });
      expect(exported.data['level']!.updated_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(await ops.deletePlayerData(ws.workspaceId, 42, 'level')).to.deep.equal({ deleted: 1, version: 3 });
      expect((await failure(ops.getPlayerValue(ws.workspaceId, 42, 'level'))).message).to.equal('Key not found');
      expect(await ops.deletePlayerData(ws.workspaceId, 42)).to.deep.equal({ deleted: 1, version: 4 });
      expect((await failure(ops.exportPlayer(ws.workspaceId, 42))).message).to.equal('Player not found');
      expect(await ops.deletePlayerData(ws.workspaceId, 42)).to.deep.equal({ deleted: 0, version: 4 });
    });

    it('refuses bad user ids, keys and values with 400, and unknown workspaces with 404', async () => {
      const ws = await newWorkspace(redis);
      const ops = testOps(redis, { config: loadConfig({ MAX_VALUE_DEPTH: '3' }) });
      expect((await failure(ops.setPlayerValue(ws.workspaceId, 'bad id!', 'k', 1))).status).to.equal(400);
      expect((await failure(ops.setPlayerValue(ws.workspaceId, -1, 'k', 1))).status).to.equal(400);
      expect((await failure(ops.setPlayerValue(ws.workspaceId, 1, '', 1))).status).to.equal(400);
      expect((await failure(ops.setPlayerValue(ws.workspaceId, 1, 'k', null))).status).to.equal(400);
      expect((await failure(ops.setPlayerValue(ws.workspaceId, 1, 'k', [[[[1]]]]))).status).to.equal(400);
      expect((await failure(ops.setPlayerValue('ws_missing', 1, 'k', 1))).status).to.equal(404);
    });
  });
});
