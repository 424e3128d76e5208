// The console's leaderboards, in Debian's Chromium against the real service: the Leaderboards
// page reached from the workspace's navigation, a board a page at a time from its top (next,
// back and the top again by cursor, another period), a player's rank looked up by user id with
// the entries around it, a player removed (confirmed) from the page and from the lookup, the
// periods changed, the board reset by its typed name, and the lookup and removals from the
// keyboard alone. Each page: axe-core and a screenshot at 1280x800 and 390x844.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, signIn, useConsolePage } from './support.js';

describe('operator console: leaderboards', function () {
  this.timeout(90_000);
  const h = useService({ ADMIN_TOKEN });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });

  /** A workspace with `coins`: p1..p25 scoring 10..250, and `wins` with one entry. */
  async function withBoards() {
    const ws = await testOps(h.redis).createWorkspace({ name: `boards-${randomSuffix()}`, plan: 'pro' });
    const set = (board: string, userId: string, score: number) =>
      call(h.service, 'POST', `/leaderboards/${board}/set`, { key: ws.apiKey, body: { userId, score } });
    for (let i = 1; i <= 25; i++) await set('coins', `p${i}`, i * 10);
    await set('wins', 'p1', 1);
    return ws;
  }
  const onBoard = async (key: string, userId: string) => (await call(h.service, 'GET', `/leaderboards/coins/players/${userId}`, { key })).status === 200;

  it('lists boards from the navigation, pages one from its top, removes a player, changes its periods and resets it', async () => {
    const ws = await withBoards();
    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}`);
    await signIn(page);
    await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Leaderboards' }).click();
    expect(page.url()).to.equal(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}/leaderboards`);
    const boards = page.getByRole('table', { name: 'Leaderboards of the workspace' });
    await boards.getByRole('link', { name: 'coins' }).waitFor();
    expect(await boards.locator('tbody tr').count()).to.equal(2);
    expect(await boards.locator('tbody tr').first().textContent()).to.include('all 25');
    await checkBothSizes(page, 'leaderboards', () => boards.waitFor());
    await boards.getByRole('link', { name: 'coins' }).click();

    await page.getByRole('heading', { name: /Leaderboard coins/ }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Leaderboards' }).getAttribute('aria-current')).to.equal('page');
    const rows = page.getByRole('table', { name: 'Entries of coins' }).locator('tbody tr');
    await rows.first().filter({ hasText: 'p25' }).waitFor();
    expect(await rows.count()).to.equal(20);
    await page.getByText('All-time, highest first; page 1 (the top).').waitFor();
    await checkBothSizes(page, 'leaderboard', () => rows.first().waitFor());
    await page.getByRole('button', { name: 'Next page' }).click();
    await rows.first().filter({ hasText: 'p5' }).waitFor();
    expect(await rows.count()).to.equal(5);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).to.equal(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await rows.first().filter({ hasText: 'p25' }).waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await rows.first().filter({ hasText: 'p5' }).waitFor();
    await page.getByRole('button', { name: 'Top page' }).click();
    await rows.first().filter({ hasText: 'p25' }).waitFor();
    expect(await page.getByRole('button', { name: 'Top page' }).isDisabled()).to.equal(true);

    // Removing asks first; dismissed, the player stays.
    ui.answer = 'dismiss';
    await page.getByRole('button', { name: 'Remove p25 from coins' }).click();
    expect(ui.asked).to.deep.equal(['Remove player p25 from every period of coins?']);
    expect(await onBoard(ws.apiKey, 'p25')).to.equal(true);
    ui.answer = 'accept';
    await page.getByRole('button', { name: 'Remove p25 from coins' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed player p25' }).waitFor();
    await rows.first().filter({ hasText: 'p24' }).waitFor();
    expect(await onBoard(ws.apiKey, 'p25')).to.equal(false);

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

  it("looks a player's rank up in the period and order chosen, says when the player is not on it, and removes it from there", async () => {
    const ws = await withBoards();
    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}/leaderboards/coins`);
    await signIn(page);
    const rankSection = page.getByRole('region', { name: "Find a player's rank" });
    await rankSection.getByLabel('User id').fill('p7');
    await rankSection.getByRole('button', { name: 'Find rank' }).click();
    const result = page.getByTestId('rank-result');
    await result.filter({ hasText: 'Player p7 is number 19 on coins all-time, with 70.' }).waitFor();
    const around = page.getByRole('table', { name: 'Entries around p7' }).locator('tbody tr');
    expect(await around.allTextContents()).to.deep.equal(['17p990', '18p880', '19p770', '20p660', '21p550']);
    await checkBothSizes(page, 'leaderboard-rank', () => result.waitFor());

    // The lookup follows the order chosen above.
    await page.getByLabel('Order').selectOption('asc');
    await result.filter({ hasText: 'Player p7 is number 7 on coins all-time, with 70.' }).waitFor();
    await page.getByLabel('Order').selectOption('desc');
    await result.filter({ hasText: 'is number 19' }).waitFor();

    await rankSection.getByLabel('User id').fill('nobody');
    await rankSection.getByRole('button', { name: 'Find rank' }).click();
    await rankSection.getByRole('alert').filter({ hasText: 'Player nobody has no entry on coins all-time. (PLAYER_NOT_FOUND 404)' }).waitFor();
    expect(await result.count()).to.equal(0);

    await rankSection.getByLabel('User id').fill('p7');
    await rankSection.getByRole('button', { name: 'Find rank' }).click();
    await result.filter({ hasText: 'is number 19' }).waitFor();
    ui.answer = 'dismiss';
    await rankSection.getByRole('button', { name: 'Remove p7 from every period' }).click();
    expect(ui.asked).to.deep.equal(['Remove player p7 from every period of coins?']);
    expect(await onBoard(ws.apiKey, 'p7')).to.equal(true);
    ui.answer = 'accept';
    await rankSection.getByRole('button', { name: 'Remove p7 from every period' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed player p7.' }).waitFor();
    expect(await onBoard(ws.apiKey, 'p7')).to.equal(false);
    expect(await result.count()).to.equal(0);
    // The page below the top is read again: p6 moved up to rank 19.
    await page.getByRole('table', { name: 'Entries of coins' }).locator('tbody tr').nth(18).filter({ hasText: 'p6' }).waitFor();
  });

  it('works from the keyboard alone: the Leaderboards entry, a board, its pages and top, a rank, removals', async () => {
    const ws = await withBoards();
    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}`);
    await signIn(page);
    await page.getByRole('tab', { name: 'Overview' }).waitFor();
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent?.trim() || '');
    async function tabTo(what: string): Promise<void> {
      for (let i = 0; i < 120 && (await focused()) !== what; i++) await page.keyboard.press('Tab');
      expect(await focused()).to.equal(what);
    }
    await tabTo('Leaderboards');
    await page.keyboard.press('Enter');
    await page.getByRole('table', { name: 'Leaderboards of the workspace' }).waitFor();
    await tabTo('coins');
    await page.keyboard.press('Enter');
    const rows = page.getByRole('table', { name: 'Entries of coins' }).locator('tbody tr');
    await rows.first().filter({ hasText: 'p25' }).waitFor();
    await tabTo('Next page');
    await page.keyboard.press('Enter');
    await rows.first().filter({ hasText: 'p5' }).waitFor();
    await tabTo('Top page');
    await page.keyboard.press('Enter');
    await rows.first().filter({ hasText: 'p25' }).waitFor();

    await tabTo('Remove p25 from coins');
    await page.keyboard.press('Enter');
    await rows.first().filter({ hasText: 'p24' }).waitFor();
    expect(await onBoard(ws.apiKey, 'p25')).to.equal(false);

    await tabTo('rank-user');
    await page.keyboard.type('p3');
    await page.keyboard.press('Enter');
    await page.getByTestId('rank-result').filter({ hasText: 'Player p3 is number 22 on coins all-time, with 30.' }).waitFor();
    await tabTo('Remove p3 from every period');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Removed player p3.' }).waitFor();
    expect(await onBoard(ws.apiKey, 'p3')).to.equal(false);
    expect(ui.asked).to.deep.equal(['Remove player p25 from every period of coins?', 'Remove player p3 from every period of coins?']);
  });
});
