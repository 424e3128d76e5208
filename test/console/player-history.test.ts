// The History section of the console's player page, in Debian's Chromium against the real
// service: the versions listed, one viewed, a restore refused while a game server holds the
// player and then forced, after which the server's next save is SESSION_LOST.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, testOps } from '../support/admin.js';
import { call, testClock, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, openTab, signIn, useConsolePage } from './support.js';

describe('operator console: player history and restore', function () {
  this.timeout(60_000);
  // Moved one restore interval before each write, so that each write opens a restore point.
  const clock = testClock();
  const h = useService({ ADMIN_TOKEN, HISTORY_MAX_VERSIONS: '50' }, { clock: clock.now });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });

  it('lists versions, shows one, refuses a restore under a session, then forces it', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `history-${randomSuffix()}`, plan: 'pro' });
    const api = (path: string, body: unknown) => {
      clock.advance(300_000);
      return call(h.service, 'POST', path, { key: ws.apiKey, body });
    };
    const read = async () => (await call(h.service, 'GET', '/data?userId=77', { key: ws.apiKey })).body;
    await api('/data/set', { userId: 77, key: 'coins', value: 100 });
    await api('/data/set', { userId: 77, key: 'level', value: 2 });
    // The bad save a support ticket is about.
    await api('/data/batch', { userId: 77, ops: [{ op: 'set', key: 'coins', value: 0 }, { op: 'set', key: 'hacked', value: true }] });
    const acquired = await api('/sessions/acquire', { userId: 77, owner: 'job-77' });
    expect(acquired.status).to.equal(200);

    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}/players/77`);
    await signIn(page);
    await openTab(page, 'History');
    await page.getByRole('heading', { name: 'History', exact: true }).waitFor();
    const rows = page.getByRole('table', { name: 'Versions of the player, newest first' }).locator('tbody tr');
    await rows.first().filter({ hasText: '3 (current)' }).waitFor();
    expect(await rows.count()).to.equal(4);
    expect(await rows.nth(1).textContent()).to.include('2').and.include('batch').and.include(`key:${ws.keyId}`).and.include('coins, hacked');
    // The player's first write shows as version 0's restore point, with its time and writer.
    expect(await rows.nth(3).textContent()).to.match(/^0\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTCset/).and.include(`key:${ws.keyId}`).and.include('coins');

    await page.getByRole('button', { name: 'View version 2' }).click();
    const version2 = page.getByRole('region', { name: 'Version 2' });
    await version2.getByLabel('Value of coins at version 2').waitFor();
    expect(await version2.getByLabel('Value of coins at version 2').textContent()).to.equal('100');
    expect(await version2.getByRole('heading', { name: 'hacked' }).count()).to.equal(0);

    await page.getByRole('button', { name: 'Restore version 2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore version 2?' });
    await dialog.getByText('job-77').first().waitFor();
    // What will change, before anything is written: coins back to 100, hacked removed, level kept.
    const diff = dialog.getByRole('region', { name: 'What will change' }).locator('tbody tr');
    await diff.first().waitFor();
    expect(await diff.allTextContents()).to.deep.equal(['coinschanged0100', 'hackedremovedtrue—']);
    await checkBothSizes(page, 'player-history', () => diff.first().waitFor());

    await dialog.getByRole('button', { name: 'Restore version 2' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'SESSION_LOCKED' }).waitFor();
    expect((await read()).data).to.deep.equal({ coins: 0, level: 2, hacked: true });

    await dialog.getByLabel("End the game server's session first").check();
    clock.advance(300_000);
    await dialog.getByRole('button', { name: 'Restore version 2' }).click();
    const result = page.getByTestId('restore-result');
    await result.filter({ hasText: 'Restored version 2 as version 4 (1 key written, 1 deleted); ended the session of job-77' }).waitFor();
    // Said where the operator is looking (focus moves there), and the panels showing the old data closed.
    expect(await result.evaluate((el) => el === document.activeElement)).to.equal(true);
    expect(await page.getByRole('region', { name: 'Version 2' }).count()).to.equal(0);
    expect(await page.getByRole('dialog').count()).to.equal(0);
    await page.getByText('No game server holds this player.').waitFor();
    expect(await page.getByTestId('player-version').textContent()).to.equal('4');
    await rows.first().filter({ hasText: '4 (current)' }).waitFor();
    expect(await rows.nth(1).textContent()).to.include('restore').and.include('admin:console');
    expect(await read()).to.deep.include({ version: 4, data: { coins: 100, level: 2 } });

    // The game server still holds coins=0 in memory: its save is refused.
    const late = await api('/data/set', { userId: 77, key: 'coins', value: 0, sessionId: acquired.body.data.sessionId });
    expect(late.body.code).to.equal('SESSION_LOST');
  });
});
