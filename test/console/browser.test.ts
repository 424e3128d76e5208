// The operator console as a person uses it, in Debian's Chromium against the real service and
// Redis: sign-in, workspaces and keys, a player's data (edit, conflict), bans, audit, sign-out.
// Every page gets an axe-core check; the main pages are photographed into artifacts/console/.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { BanStore } from '../../src/store/installation/bans.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, testClock, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, expectAccessible, openTab, signIn, useConsolePage } from './support.js';

describe('operator console in a browser', function () {
  this.timeout(60_000);
  // History on, to see the console named as the writer of a player's versions.
  // Moved a restore interval on where a write must open a restore point of its own.
  const clock = testClock();
  const h = useService({ ADMIN_TOKEN, HISTORY_MAX_VERSIONS: '50' }, { clock: clock.now });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });

  const url = (path: string) => `${h.service.opsUrl}${path}`;
  const publicCall = (method: string, path: string, key: string, body?: unknown) =>
    call(h.service, method, path, { key, ...(body === undefined ? {} : { body }) });

  async function signedInAt(path: string): Promise<void> {
    await page.goto(url(path));
    await signIn(page);
  }

  it('refuses a wrong token in words, then signs in and opens the page the link pointed to', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `deep-link-${randomSuffix()}` });
    await publicCall('POST', '/data/set', ws.apiKey, { userId: 'p1', key: 'coins', value: 5 });
    await page.goto(url(`/console/workspaces/${ws.workspaceId}/players/p1`));
    await page.getByLabel('Admin token').waitFor();
    await checkBothSizes(page, 'sign-in');
    await page.getByLabel('Admin token').fill('a-wrong-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong admin token' }).waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/UNAUTHORIZED|401/);
    await signIn(page);
    await page.getByRole('heading', { name: 'Player p1' }).waitFor();
    expect(page.url()).to.equal(url(`/console/workspaces/${ws.workspaceId}/players/p1`));
    // The token is kept nowhere the page can read it back.
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie + location.href);
    expect(stored).to.not.include(ADMIN_TOKEN);
  });

  it('creates a workspace (first key shown once), a key, renames, changes plan, and deletes it by its typed name', async () => {
    const name = `Console game ${randomSuffix()}`;
    await signedInAt('/console/workspaces');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Plan', { exact: true }).selectOption('pro');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    const first = await page.getByRole('textbox', { name: 'First API key' }).inputValue();
    expect((await publicCall('GET', '/ping', first)).status).to.equal(200);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await page.getByLabel('Search by name or id').fill(name);
    await checkBothSizes(page, 'workspaces');

    await page.getByRole('link', { name }).first().click();
    await page.getByLabel('Storage').waitFor();
    expect(await page.locator('.storage').textContent()).to.match(/of [\d.]+ (KiB|MiB|GiB)/);
    await checkBothSizes(page, 'workspace');
    await openTab(page, 'API keys');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Label').fill('support');
    await page.getByLabel('Scope').selectOption('read');
    await page.getByRole('button', { name: 'Create key' }).click();
    const second = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    expect((await publicCall('GET', '/ping', second)).status).to.equal(200);
    await page.getByRole('cell', { name: 'support', exact: true }).waitFor();
    await checkBothSizes(page, 'workspace-keys');
    await openTab(page, 'Usage');
    await page.locator('.chart canvas').first().waitFor();
    // The legend shows the latest day's values, not uPlot's `--` placeholders.
    expect(await page.locator('.u-legend').textContent()).to.not.include('--');
    await checkBothSizes(page, 'workspace-usage');
    await openTab(page, 'Export and import');
    await checkBothSizes(page, 'workspace-transfer');
    await openTab(page, 'Games');
    await checkBothSizes(page, 'workspace-games');
    await openTab(page, 'Settings');
    await checkBothSizes(page, 'workspace-settings');

    await page.getByLabel('Name', { exact: true }).fill(`${name} renamed`);
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('status').filter({ hasText: 'Renamed' }).waitFor();
    await page.getByLabel('Plan', { exact: true }).selectOption('free');
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByRole('status').filter({ hasText: 'Plan changed to free' }).waitFor();
    const id = page.url().split('?')[0]!.split('/').pop()!;
    const shown = (await adminCall(h.service, 'GET', `/workspaces/${id}`)).body.data;
    expect(shown).to.include({ name: `${name} renamed`, plan: 'free' });

    const remove = page.getByRole('button', { name: 'Delete workspace' });
    expect(await remove.isDisabled()).to.equal(true);
    await page.getByLabel('To delete this workspace, type').fill(`${name} renamed`);
    await remove.click();
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    expect((await adminCall(h.service, 'GET', `/workspaces/${id}`)).status).to.equal(404);
  });

  it('downloads a workspace export and imports it into another workspace, listing refused lines', async () => {
    const ops = testOps(h.redis);
    const source = await ops.createWorkspace({ name: `export-${randomSuffix()}`, plan: 'pro' });
    for (let i = 0; i < 3; i++) await publicCall('POST', '/data/set', source.apiKey, { userId: `p${i}`, key: 'coins', value: i });
    await signedInAt(`/console/workspaces/${source.workspaceId}?tab=transfer`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download export' }).click()]);
    expect(download.suggestedFilename()).to.equal(`${source.workspaceId}.ndjson`);
    const path = await download.path();
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(path, 'utf8');
    expect(text.trimEnd().split('\n')).to.have.length(3);

    const target = await ops.createWorkspace({ name: `import-${randomSuffix()}`, plan: 'pro' });
    await page.goto(url(`/console/workspaces/${target.workspaceId}?tab=transfer`));
    await page.getByLabel('Export file').setInputFiles({ name: 'players.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(`${text}{"userId":"bad"}\n`) });
    await page.getByLabel('Existing players').selectOption('skip');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: '3 new' }).waitFor();
    await page.getByRole('cell', { name: 'version must be a non-negative integer' }).waitFor();
    expect(await page.getByRole('table', { name: 'Refused lines' }).getByRole('row').nth(1).textContent()).to.match(/^4bad/);
    await expectAccessible(page, 'workspace import');
    expect((await publicCall('GET', '/data?userId=p2&key=coins', target.apiKey)).body.data.value).to.equal(2);
  });

  it('finds a player, refuses invalid JSON, saves an edit that the public API then reads', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `players-${randomSuffix()}`, plan: 'pro' });
    await publicCall('POST', '/data/set', ws.apiKey, { userId: 42, key: 'coins', value: 5 });
    await publicCall('POST', '/data/set', ws.apiKey, { userId: 42, key: 'inventory', value: { sword: 1, potions: ['red', 'blue'] } });
    await signedInAt(`/console/workspaces/${ws.workspaceId}`);
    await page.getByLabel('User id').fill('42');
    await page.getByRole('button', { name: 'Open player' }).click();
    await page.getByRole('heading', { name: 'inventory' }).waitFor();
    expect(await page.getByLabel('Value of inventory').textContent()).to.include('potions').and.include('"blue"');
    expect(Number(await page.getByTestId('player-version').textContent())).to.be.greaterThan(0);
    await checkBothSizes(page, 'player');

    await page.getByRole('button', { name: 'Edit coins' }).click();
    const editor = page.getByLabel('New value of coins (JSON)');
    await editor.fill('{"not": json}');
    await page.getByText('Not valid JSON').waitFor();
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).to.equal(true);
    await editor.fill('{"gold": 42}');
    clock.advance(300_000); // the edit opens a restore point, which names its writer
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved "coins"' }).waitFor();
    const read = await publicCall('GET', '/data?userId=42&key=coins', ws.apiKey);
    expect(read.body.data.value).to.deep.equal({ gold: 42 });
    // The write is the console's, not the bearer token's actor (a restore point names it as
    // the writer once it opens one: test/console/player-history.test.ts).
    const audit = (await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&action=player.set`)).body.data as Array<{ actor: string }>;
    expect(audit.map((a) => a.actor)).to.deep.equal(['console']);

    await page.getByLabel('Key', { exact: true }).fill('level');
    await page.getByLabel('Value (JSON)').fill('7');
    await page.getByRole('button', { name: 'Add key' }).click();
    await page.getByRole('heading', { name: 'level' }).waitFor();
    expect((await publicCall('GET', '/data?userId=42&key=level', ws.apiKey)).body.data.value).to.equal(7);

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export as JSON file' }).click();
    expect((await download).suggestedFilename()).to.equal(`player-${ws.workspaceId}-42.json`);

    await page.getByRole('button', { name: 'Delete key level' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted "level"' }).waitFor();
    expect((await publicCall('GET', '/data?userId=42&key=level', ws.apiKey)).status).to.equal(404);
  });

  it('shows a conflict, and writes nothing, when a game server wrote the key after the page loaded it', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `conflict-${randomSuffix()}`, plan: 'pro' });
    await publicCall('POST', '/data/set', ws.apiKey, { userId: 'p7', key: 'coins', value: 1 });
    await signedInAt(`/console/workspaces/${ws.workspaceId}/players/p7`);
    await page.getByRole('button', { name: 'Edit coins' }).click();
    await publicCall('POST', '/data/set', ws.apiKey, { userId: 'p7', key: 'coins', value: 100 });
    await page.getByLabel('New value of coins (JSON)').fill('2');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'Conflict' }).waitFor();
    expect((await publicCall('GET', '/data?userId=p7&key=coins', ws.apiKey)).body.data.value).to.equal(100);
  });

  it('shows the game server holding a player, refuses an edit while it holds it, and force-releases it', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `session-${randomSuffix()}`, plan: 'pro' });
    await publicCall('POST', '/data/set', ws.apiKey, { userId: 'p9', key: 'coins', value: 1 });
    const acquired = await publicCall('POST', '/sessions/acquire', ws.apiKey, { userId: 'p9', owner: 'job-1234' });
    expect(acquired.status).to.equal(200);
    await signedInAt(`/console/workspaces/${ws.workspaceId}/players/p9`);
    await page.getByRole('region', { name: 'Session' }).filter({ hasText: 'job-1234' }).waitFor();
    await page.getByRole('button', { name: 'Edit coins' }).click();
    await page.getByLabel('New value of coins (JSON)').fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'SESSION_LOCKED' }).waitFor();
    expect((await publicCall('GET', '/data?userId=p9&key=coins', ws.apiKey)).body.data.value).to.equal(1);
    await page.getByRole('button', { name: 'Force-release session', exact: true }).click();
    await page.getByText('No game server holds this player.').waitFor();
    // The refused edit is still in the editor: save it again.
    expect(await page.getByLabel('New value of coins (JSON)').inputValue()).to.equal('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved "coins"' }).waitFor();
    expect((await publicCall('GET', '/data?userId=p9&key=coins', ws.apiKey)).body.data.value).to.equal(5);
  });

  it('revokes a key, and the public API refuses it', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `revoke-${randomSuffix()}` });
    expect((await publicCall('GET', '/ping', ws.apiKey)).status).to.equal(200);
    await signedInAt(`/console/workspaces/${ws.workspaceId}?tab=keys`);
    await page.getByRole('button', { name: /^Revoke key/ }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked key' }).waitFor();
    await page.getByRole('cell', { name: 'revoked', exact: true }).waitFor();
    // Revocation reaches every instance's key cache by a Redis event: wait for it, bounded.
    let status = 200;
    for (const deadline = Date.now() + 5000; status === 200 && Date.now() < deadline; ) {
      status = (await publicCall('GET', '/ping', ws.apiKey)).status;
    }
    expect(status).to.equal(401);
  });

  it('lifts a ban, shows a gate ban\'s evidence and the recent violations', async () => {
    const octet = Math.floor(Math.random() * 120) + 1;
    const address = `203.0.113.${octet}`;
    const gateBanned = `203.0.113.${octet + 128}`;
    await adminCall(h.service, 'DELETE', `/bans/${address}`);
    await adminCall(h.service, 'DELETE', `/bans/${gateBanned}`);
    expect((await adminCall(h.service, 'POST', '/bans', { body: { address, reason: 'console test' } })).status).to.equal(200);
    // A ban as the gate leaves one, with the request that caused it, and its violation.
    const evidence = { method: 'POST', path: '/api/v1/data/set', userAgent: 'curl/8.5.0', headerNames: ['user-agent', 'x-api-key'], headers: {} };
    const bans = new BanStore(h.redis);
    await bans.add({ address: gateBanned, bannedAt: new Date().toISOString(), source: 'gate', reasons: ['user-agent'], evidence });
    await bans.recordViolation({ at: new Date().toISOString(), address: gateBanned, reasons: ['user-agent'], mode: 'enforce', outcome: 'banned', evidence });

    await signedInAt('/console/bans');
    await page.getByLabel('Search bans (address, reason, note)').fill('203.0.113.');
    await page.getByText(`Evidence of ${gateBanned}`, { exact: true }).click();
    expect(await page.getByLabel(`Evidence of ${gateBanned}`).textContent()).to.include('curl/8.5.0');
    await page.getByRole('cell', { name: gateBanned, exact: true }).nth(1).waitFor();
    await checkBothSizes(page, 'bans');
    await page.getByRole('button', { name: `Lift the ban of ${address}`, exact: true }).click();
    await page.getByRole('status').filter({ hasText: `Lifted the ban of ${address}` }).waitFor();
    expect((await adminCall(h.service, 'GET', `/bans/${address}`)).status).to.equal(404);
    const audit = (await adminCall(h.service, 'GET', '/audit?limit=20')).body.data as Array<{ actor: string; action: string; target: string }>;
    expect(audit.find((a) => a.target === `address:${address}` && a.action === 'ban.lift')).to.include({ actor: 'console' });
    await adminCall(h.service, 'DELETE', `/bans/${gateBanned}`);
  });

  it('lists the audit trail, newest first, with the console\'s actions under its own name', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `audit-${randomSuffix()}` });
    await signedInAt(`/console/workspaces/${ws.workspaceId}?tab=settings`);
    await page.getByLabel('Name', { exact: true }).fill('audited');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('status').filter({ hasText: 'Renamed' }).waitFor();
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByLabel('Workspace id (empty: all)').fill(ws.workspaceId);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    const firstRow = page.locator('tbody tr').first();
    await firstRow.filter({ hasText: 'workspace.rename' }).waitFor();
    expect(await firstRow.locator('td').nth(1).textContent()).to.equal('console');
    await checkBothSizes(page, 'audit');
  });

  it('reads at a phone\'s width without the page scrolling sideways', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `phone-${randomSuffix()}` });
    await page.setViewportSize({ width: 390, height: 844 });
    await signedInAt(`/console/workspaces/${ws.workspaceId}?tab=usage`);
    await page.locator('.chart canvas').first().waitFor();
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest('.table-wrap'))
        .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`),
    );
    expect(wide, 'elements wider than the screen').to.deep.equal([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.be.at.most(0);
    await expectAccessible(page, 'workspace at phone width');
  });

  it('works from the keyboard alone: sign in, move between pages, open a player that has no data yet and add a key', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `keyboard-${randomSuffix()}` });
    await page.goto(url(`/console/workspaces/${ws.workspaceId}`));
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent || '');
    async function tabTo(what: string): Promise<void> {
      for (let i = 0; i < 60 && (await focused()) !== what; i++) await page.keyboard.press('Tab');
      expect(await focused()).to.equal(what);
    }
    await tabTo('admin-token');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Players' }).waitFor();
    await tabTo('find-user');
    await page.keyboard.type('newcomer');
    await page.keyboard.press('Enter');
    await page.getByText('This player has no data.').waitFor();
    await tabTo('new-key');
    await page.keyboard.type('tutorial');
    await tabTo('new-value');
    await page.keyboard.type('{"done": true}');
    await tabTo('Add key');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'tutorial' }).waitFor();
    expect((await publicCall('GET', '/data?userId=newcomer&key=tutorial', ws.apiKey)).body.data.value).to.deep.equal({ done: true });
    await tabTo('Bans');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Bans', level: 1 }).waitFor();
  });

  it('pages a long list: 25 matching workspaces show as 20 and 5', async () => {
    const prefix = `paged-${randomSuffix()}`;
    const ops = testOps(h.redis);
    await Promise.all(Array.from({ length: 25 }, (_, i) => ops.createWorkspace({ name: `${prefix}-${String(i).padStart(2, '0')}` })));
    await signedInAt('/console/workspaces');
    await page.getByLabel('Search by name or id').fill(prefix);
    await page.getByText('Page 1 of 2 (25 in all)').waitFor();
    expect(await page.locator('tbody tr').count()).to.equal(20);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2 of 2 (25 in all)').waitFor();
    expect(await page.locator('tbody tr').count()).to.equal(5);
    await page.getByRole('link', { name: `${prefix}-24` }).waitFor();
  });

  it('signs out, and every page asks for the token again', async () => {
    await signedInAt('/console/audit');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect((await ui.context.cookies()).map((c) => c.name)).to.not.include('pds_console');
    for (const path of ['/console/workspaces', '/console/bans', '/console/audit']) {
      await page.goto(url(path));
      await page.getByLabel('Admin token').waitFor();
    }
    const api = await page.evaluate(async () => (await fetch('/admin/v1/workspaces')).status);
    expect(api).to.equal(401);
  });
});
