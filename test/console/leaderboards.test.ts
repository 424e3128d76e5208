// The console's leaderboards, in Debian's Chromium against the real service: the boards listed
// on the workspace's page, a board a page at a time (next and back by cursor, another period),
// a player removed, the periods changed, and the board reset by its typed name.
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { ensureConsoleBuilt, expectAccessible, launchBrowser, screenshot, signIn } from './support.js';

describe('operator console: leaderboards', function () {
  this.timeout(60_000);
  const h = useService({ ADMIN_TOKEN });
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    await ensureConsoleBuilt();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
  });
  afterEach(async () => {
    await context?.close();
  });

  it('lists boards, pages one, removes a player, changes its periods and resets it', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `boards-${randomSuffix()}`, plan: 'pro' });
    const set = (board: string, userId: string, score: number) =>
      call(h.service, 'POST', `/leaderboards/${board}/set`, { key: ws.apiKey, body: { userId, score } });
    for (let i = 1; i <= 25; i++) await set('coins', `p${i}`, i * 10);
    await set('wins', 'p1', 1);

    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}`);
    await signIn(page);
    const boards = page.getByRole('table', { name: 'Leaderboards of the workspace' });
    await boards.getByRole('link', { name: 'coins' }).waitFor();
    expect(await boards.locator('tbody tr').count()).to.equal(2);
    expect(await boards.locator('tbody tr').first().textContent()).to.include('all 25');
    await boards.getByRole('link', { name: 'coins' }).click();

    await page.getByRole('heading', { name: /Leaderboard coins/ }).waitFor();
    const rows = page.getByRole('table', { name: 'Entries of coins' }).locator('tbody tr');
    await rows.first().filter({ hasText: 'p25' }).waitFor();
    expect(await rows.count()).to.equal(20);
    await page.getByRole('button', { name: 'Next page' }).click();
    await rows.first().filter({ hasText: 'p5' }).waitFor();
    expect(await rows.count()).to.equal(5);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).to.equal(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await rows.first().filter({ hasText: 'p25' }).waitFor();
    await expectAccessible(page, 'leaderboard');
    await screenshot(page, 'leaderboard');

    await page.getByRole('button', { name: 'Remove p25 from coins' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed player p25' }).waitFor();
    await rows.first().filter({ hasText: 'p24' }).waitFor();
    expect((await call(h.service, 'GET', '/leaderboards/coins/players/p25', { key: ws.apiKey })).status).to.equal(404);

    await page.getByRole('checkbox', { name: 'weekly' }).check();
    await page.getByRole('button', { name: 'Save periods' }).click();
    await page.getByRole('status').filter({ hasText: 'Every write now goes to all, weekly' }).waitFor();
    const board = (await adminCall(h.service, 'GET', `/workspaces/${ws.workspaceId}/leaderboards`)).body.data.find((b: { board: string }) => b.board === 'coins');
    expect(board.periods).to.deep.equal(['all', 'weekly']);
    await page.getByLabel('Period', { exact: true }).selectOption('weekly');
    await page.getByText('No entries.').waitFor();

    const reset = page.getByRole('button', { name: 'Reset board' });
    expect(await reset.isDisabled()).to.equal(true);
    await page.getByLabel('To reset this board, type').fill('coins');
    await reset.click();
    await page.getByRole('status').filter({ hasText: 'Reset: 24 entries removed' }).waitFor();
    expect((await call(h.service, 'GET', '/leaderboards/coins', { key: ws.apiKey })).body.data.entries).to.deep.equal([]);
  });
});
