// The console's tabs and its search across workspaces (issue 39), in Debian's Chromium against
// the real service: the workspace's and the player's tabs are in the URL (a link opens the same
// tab, Back returns to the last), move with the arrow keys, and keep each page within about one
// and a half screens at 1366x900; a user id is found in every workspace that holds it, by name.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, openTab, signIn, useConsolePage } from './support.js';

describe('operator console: tabs in the URL, pages that fit, a player found in every workspace', function () {
  this.timeout(90_000);
  const h = useService({ ADMIN_TOKEN });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });
  const url = (path: string) => `${h.service.opsUrl}${path}`;
  const height = () => page.evaluate(() => document.documentElement.scrollHeight);

  it('keeps the tab in the URL, moves between tabs by arrow keys, and keeps pages within 1.5 screens', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `Tabs ${randomSuffix()}`, plan: 'pro' });
    for (const key of ['coins', 'inventory', 'level', 'settings']) {
      await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p1', key, value: { a: 1, b: [1, 2, 3] } } });
    }
    await page.goto(url(`/console/workspaces/${ws.workspaceId}`));
    await signIn(page);
    const overview = page.getByRole('tab', { name: 'Overview' });
    await overview.waitFor();
    expect(await overview.getAttribute('aria-selected')).to.equal('true');
    // The name is the title; the id stands beside it, secondary.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal(ws.name);
    await overview.focus();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(page.url()).searchParams.get('tab')).to.equal('keys');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).to.equal('tab');
    await page.keyboard.press('End');
    await page.getByRole('button', { name: 'Rename' }).waitFor();
    expect(new URL(page.url()).searchParams.get('tab')).to.equal('settings');
    await page.goBack();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // Each of the workspace's tabs fits in about one and a half screens.
    for (const tab of ['Overview', 'API keys', 'Usage', 'Export and import', 'Games', 'Settings']) {
      await openTab(page, tab);
      if (tab === 'Usage') await page.locator('.chart canvas').first().waitFor();
      expect(await height(), `the workspace's ${tab} tab`).to.be.at.most(1350);
    }

    // The player's page: a link to a tab opens it; every tab fits.
    await page.goto(url(`/console/workspaces/${ws.workspaceId}/players/p1?tab=history`));
    await page.getByRole('heading', { name: 'History', exact: true }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal(`Player p1 · ${ws.name}`);
    for (const tab of ['Data', 'History', 'Messages', 'Danger zone']) {
      await openTab(page, tab);
      expect(await height(), `the player's ${tab} tab`).to.be.at.most(1350);
    }
    await openTab(page, 'Data');
    await page.getByRole('heading', { name: 'inventory' }).waitFor();
    expect(new URL(page.url()).searchParams.get('tab')).to.equal(null);
    // The dark scheme, for a reader whose system asks for it: contrast holds there too.
    await page.emulateMedia({ colorScheme: 'dark' });
    await checkBothSizes(page, 'player-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('finds a user id in every workspace that holds it, and opens it there', async () => {
    const ops = testOps(h.redis);
    const [a, b, c] = await Promise.all(['A', 'B', 'C'].map((n) => ops.createWorkspace({ name: `Search ${n} ${randomSuffix()}` })));
    const userId = `ticket-${randomSuffix()}`;
    for (const ws of [a!, c!]) await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: 9 } });
    await call(h.service, 'POST', '/data/set', { key: b!.apiKey, body: { userId: `${userId}x`, key: 'coins', value: 1 } });
    await page.goto(url('/console/workspaces'));
    await signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Find a player' }).click();
    await page.getByLabel('User id').fill(userId);
    await page.getByRole('button', { name: 'Search every workspace' }).click();
    await page.getByTestId('search-status').filter({ hasText: new RegExp(`^Player ${userId}: in 2 of \\d+ workspaces\\.$`) }).waitFor();
    expect(new URL(page.url()).searchParams.get('userId')).to.equal(userId);
    const table = page.getByRole('table', { name: 'Workspaces where the player has data' });
    expect((await table.locator('tbody tr').allTextContents()).map((t) => t.slice(0, 8)).sort()).to.deep.equal(['Search A', 'Search C']);
    await checkBothSizes(page, 'player-search', () => table.waitFor());
    await table.getByRole('link', { name: c!.name }).click();
    await page.getByRole('heading', { name: `Player ${userId}` }).waitFor();
    expect(page.url()).to.equal(url(`/console/workspaces/${c!.workspaceId}/players/${userId}`));
    // A player no workspace holds.
    await page.goto(url(`/console/players?userId=nobody-${randomSuffix()}`));
    await page.getByText('No workspace holds data for player').waitFor();
  });
});
