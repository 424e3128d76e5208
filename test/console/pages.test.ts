// The console's pages added by issue 31, in Debian's Chromium against the real service: the
// overview, a workspace's players list (pages, search), a player's tree and JSON editor (an
// error named at its place, a game server's hold said before an edit), the gate's mode on the
// bans page, the audit filters. Each page: axe-core and a screenshot at 1280x800 and 390x844.
// The service's clock is a minute of its own, far from now, so the overview shows this file's
// traffic only, whatever else the shared Redis serves.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { BanStore } from '../../src/store/installation/bans.js';
import { freshIPv4 } from '../support/gate.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, testClock, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, openTab, signIn, useConsolePage } from './support.js';

describe('operator console: overview, players, player editor, gate mode, audit filters', function () {
  this.timeout(90_000);
  const clock = testClock(Date.now() - (Date.now() % 60_000) + 86_400_000 * (1 + Math.floor(Math.random() * 3650)) + 20_000);
  const h = useService({ ADMIN_TOKEN, RATE_LIMIT_FREE: '3', RATE_LIMIT_LEASE_AHEAD: '0', PLAYER_INDEX_FLUSH_MS: '60000', STATS_FLUSH_MS: '60000' }, { clock: clock.now });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });

  const url = (path: string) => `${h.service.opsUrl}${path}`;
  const set = (key: string, userId: string, value: unknown) => call(h.service, 'POST', '/data/set', { key, body: { userId, key: 'coins', value } });

  it('shows the overview: traffic with 429s, latency, memory, the instance, the busiest workspace linked, recent bans', async () => {
    const busy = await testOps(h.redis).createWorkspace({ name: `Busy ${randomSuffix()}`, plan: 'free' });
    for (let i = 0; i < 5; i++) await call(h.service, 'GET', '/ping', { key: busy.apiKey });
    const banned = freshIPv4();
    await adminCall(h.service, 'POST', '/bans', { body: { address: banned, reason: 'overview test' } });
    await h.service.traffic.flush();

    await page.goto(url('/console/overview'));
    await signIn(page);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const summary = page.getByTestId('traffic-summary');
    expect(await summary.textContent()).to.match(/5 in the hour, 2 refused with 429, 0 answered 5xx/);
    await page.getByRole('heading', { name: 'Instances alive: 1' }).waitFor();
    expect(await page.locator('.chart canvas').count()).to.be.at.least(2);
    expect(await page.getByRole('region', { name: 'Recent bans' }).textContent()).to.include(banned);
    await page.getByLabel('Used of maxmemory').or(page.getByText('no maxmemory set')).first().waitFor();
    await checkBothSizes(page, 'overview', () => page.locator('.chart canvas').first().waitFor());
    // The legends show the latest minute's values in 24-hour UTC, not uPlot's `--` placeholders.
    const legend = (await page.locator('.u-legend').first().textContent())!;
    expect(legend).to.not.include('--');
    expect(legend).to.match(/UTC\s*\d\d:\d\d/).and.match(/Requests a second\s*[\d.]+ req\/s/);

    // It updates itself; pausing stops that, and the busiest workspace links to its page.
    await page.getByRole('button', { name: 'Pause updates' }).click();
    await page.getByText('updates paused.').waitFor();
    await page.getByRole('region', { name: 'Busiest workspaces, last hour' }).getByRole('link', { name: busy.name }).click();
    await page.getByRole('heading', { name: busy.name, level: 1 }).waitFor();
    await adminCall(h.service, 'DELETE', `/bans/${banned}`);
  });

  it('lists a workspace\'s players newest first, 25 a page, and finds them by prefix and by exact id', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `Players ${randomSuffix()}`, plan: 'pro' });
    for (let i = 0; i < 30; i++) {
      clock.advance(1000);
      await set(ws.apiKey, `hero-${String(i).padStart(2, '0')}`, i);
    }
    await call(h.service, 'POST', '/sessions/acquire', { key: ws.apiKey, body: { userId: 'hero-29', owner: 'job-29' } });
    await h.service.playerIndex.flush();

    await page.goto(url(`/console/workspaces/${ws.workspaceId}`));
    await signIn(page);
    await page.getByRole('link', { name: 'List the players' }).click();
    const rows = page.getByRole('table', { name: 'Players' }).locator('tbody tr');
    await page.getByText('30 players on the list, newest written first; page 1.').waitFor();
    expect(await rows.count()).to.equal(25);
    expect(await rows.first().textContent()).to.include('hero-29').and.include('job-29');
    await checkBothSizes(page, 'players', () => rows.first().waitFor());

    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('page 2.').waitFor();
    expect(await rows.allTextContents()).to.have.length(5);
    expect(await rows.last().textContent()).to.include('hero-00');
    await page.getByRole('button', { name: 'First page' }).click();
    await page.getByText('page 1.').waitFor();

    // The grid: the page's players as rows, their keys as columns; the view is in the URL.
    await openTab(page, 'Grid of keys');
    expect(new URL(page.url()).searchParams.get('view')).to.equal('grid');
    const grid = page.getByTestId('players-grid');
    await grid.locator('tbody tr').first().waitFor();
    expect(await grid.locator('thead th').allTextContents()).to.deep.equal(['User id', 'coins']);
    expect(await grid.locator('tbody tr').count()).to.equal(25);
    expect(await grid.locator('tbody tr').first().textContent()).to.equal('hero-2929');
    await checkBothSizes(page, 'players-grid', () => grid.locator('tbody tr').first().waitFor());
    // A link to the grid opens the grid.
    await page.goto(page.url());
    await grid.locator('tbody tr').first().waitFor();
    expect(await page.getByRole('tab', { name: 'Grid of keys' }).getAttribute('aria-selected')).to.equal('true');
    await openTab(page, 'List');

    await page.getByLabel('User id').fill('hero-1');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('10 players whose id starts with "hero-1"').waitFor();
    await page.getByLabel('User id').fill('hero-07');
    await page.getByLabel('Match').selectOption('exact');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Player hero-07.').waitFor();
    await page.getByRole('link', { name: 'hero-07' }).click();
    await page.getByRole('heading', { name: 'Player hero-07' }).waitFor();
  });

  it('shows a value as a tree (fold, copy a path), names a JSON error at its place, and says a server holds the player before the edit', async () => {
    await ui.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const ws = await testOps(h.redis).createWorkspace({ name: `Editor ${randomSuffix()}`, plan: 'pro' });
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p1', key: 'inventory', value: { bag: { potions: ['red', 'blue'] }, gold: 3 } } });
    await call(h.service, 'POST', '/sessions/acquire', { key: ws.apiKey, body: { userId: 'p1', owner: 'job-77' } });
    await page.goto(url(`/console/workspaces/${ws.workspaceId}/players/p1`));
    await signIn(page);
    const tree = page.getByRole('group', { name: 'Value of inventory' });
    await tree.getByText('"blue"').waitFor();
    await tree.getByRole('button', { name: 'Copy path inventory.bag.potions[1]' }).click();
    await tree.getByRole('status').filter({ hasText: 'Copied inventory.bag.potions[1]' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal('inventory.bag.potions[1]');
    // Folding: the bag's button closes its children, and says so.
    const bag = tree.getByRole('button', { name: 'bag', exact: true });
    await bag.click();
    expect(await bag.getAttribute('aria-expanded')).to.equal('false');
    expect(await tree.getByText('"blue"').count()).to.equal(0);
    await bag.click();
    await tree.getByText('"blue"').waitFor();
    await checkBothSizes(page, 'player-tree', () => tree.waitFor());

    await page.getByRole('button', { name: 'Edit inventory' }).click();
    const editorForm = page.locator('form.json-editor').first();
    // The game server's hold is said in the editor, before anything is sent.
    await editorForm.getByText('A game server holds this player').waitFor();
    const editor = page.getByLabel('New value of inventory (JSON)');
    await editor.fill('{\n  "gold": 3,\n  "bag": [1 2]\n}');
    await page.getByText('Not valid JSON: line 3, column 13: expected "," or "]", found "2".').waitFor();
    expect(await page.locator('.tok-error').textContent()).to.equal('2');
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).to.equal(true);
    await page.getByRole('button', { name: 'Go to the error' }).click();
    expect(await editor.evaluate((el: HTMLTextAreaElement) => [el.selectionStart, document.activeElement === el])).to.deep.equal([27, true]);
    await checkBothSizes(page, 'player-editor', () => editor.waitFor());

    await editor.fill('{"gold": 4}');
    await page.getByText('Valid JSON.').first().waitFor();
    await editorForm.getByRole('button', { name: 'Force-release session first' }).click();
    await page.getByText('No game server holds this player.').waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved "inventory"' }).waitFor();
    expect((await call(h.service, 'GET', '/data?userId=p1&key=inventory', { key: ws.apiKey })).body.data.value).to.deep.equal({ gold: 4 });

    // Opening the page was a view; the button is the export.
    const audit = (await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&action=player.*`)).body.data as Array<{ action: string }>;
    expect(audit.map((a) => a.action)).to.include('player.view').and.not.include('player.export');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export as JSON file' }).click();
    await download;
    const after = (await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&action=player.export`)).body.data as unknown[];
    expect(after).to.have.length(1);
  });

  it("shows the gate's mode and what it means, and marks the gate's own bans as set aside while it is off", async () => {
    const address = freshIPv4();
    await new BanStore(h.redis).add({ address, bannedAt: new Date().toISOString(), source: 'gate', reasons: ['user-agent'] });
    await page.goto(url('/console/bans'));
    await signIn(page);
    expect(await page.getByTestId('gate-mode').textContent()).to.equal('off');
    await page.getByText("Bans made by an operator still apply").waitFor();
    await page.getByLabel('Search bans (address, reason, note)').fill(address);
    await page.getByRole('cell', { name: /not applied while the gate is off/ }).waitFor();
    await checkBothSizes(page, 'bans-gate-mode', () => page.getByTestId('gate-mode').waitFor());
    await adminCall(h.service, 'DELETE', `/bans/${address}`);
  });

  it('filters the audit trail by action, actor and time', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `Audit ${randomSuffix()}` });
    await adminCall(h.service, 'PUT', `/workspaces/${ws.workspaceId}/players/u1`, { body: { key: 'k', value: 1 } });
    await page.goto(url('/console/audit'));
    await signIn(page);
    await page.getByLabel('Workspace id (empty: all)').fill(ws.workspaceId);
    await page.getByLabel('Action').fill('player.*');
    await page.getByLabel('Actor').fill('admin-api');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    const rows = page.getByRole('table').locator('tbody tr');
    await rows.first().filter({ hasText: 'player.set' }).waitFor();
    expect(await rows.count()).to.equal(1);
    await page.getByLabel('Actor').fill('console');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await page.getByText('No audit entries match.').waitFor();
    await page.getByLabel('Actor').fill('');
    await page.getByLabel('From (UTC)').fill('2000-01-01T00:00');
    await page.getByLabel('To (UTC)').fill('2000-01-02T00:00');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await page.getByText('No audit entries match.').waitFor();
    // Times are typed as UTC text, checked before anything is sent.
    await page.getByLabel('From (UTC)').fill('2000-02-30');
    await page.getByText('Not a date').waitFor();
    expect(await page.getByLabel('From (UTC)').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByRole('button', { name: 'Show', exact: true }).isDisabled()).to.equal(true);
    // The entry's own minute, typed as UTC, finds it, and is sent as that UTC time.
    const at = ((await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}`)).body.data as Array<{ at: string }>)[0]!.at;
    const minute = `${at.slice(0, 16)}:00Z`;
    await page.getByLabel('From (UTC)').fill(minute.slice(0, 16).replace('T', ' '));
    await page.getByLabel('To (UTC)').fill(new Date(Date.parse(minute) + 60_000).toISOString().slice(0, 16).replace('T', ' '));
    const sent = page.waitForRequest((r) => r.url().includes('/admin/v1/audit?') && r.url().includes('since='));
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    expect(new URL((await sent).url()).searchParams.get('since')).to.equal(minute);
    await rows.first().filter({ hasText: 'player.set' }).waitFor();
    await checkBothSizes(page, 'audit-filtered', () => page.getByLabel('Action').waitFor());
  });

  it('works from the keyboard alone: the overview, the players list and its search, a player\'s edit and its tree', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `Keys ${randomSuffix()}`, plan: 'pro' });
    await set(ws.apiKey, 'kb-1', { a: 1 });
    await h.service.playerIndex.flush();
    await page.goto(url('/console/overview'));
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent?.trim() || '');
    async function tabTo(what: string): Promise<void> {
      for (let i = 0; i < 80 && (await focused()) !== what; i++) await page.keyboard.press('Tab');
      expect(await focused()).to.equal(what);
    }
    await tabTo('admin-token');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await tabTo('Pause updates');
    await page.keyboard.press('Enter');
    await page.getByText('updates paused.').waitFor();
    await tabTo('Workspaces');
    await page.keyboard.press('Enter');
    await tabTo('ws-search');
    await page.keyboard.type(ws.name);
    await tabTo(ws.name);
    await page.keyboard.press('Enter');
    await tabTo('List the players');
    await page.keyboard.press('Enter');
    await page.getByRole('table', { name: 'Players' }).waitFor();
    await tabTo('player-search');
    await page.keyboard.type('kb-');
    await page.keyboard.press('Enter');
    await page.getByText('1 player whose id starts with "kb-"').waitFor();
    await tabTo('kb-1');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Player kb-1' }).waitFor();
    await tabTo('Copy path coins.a');
    await page.keyboard.press('Enter');
    await page.getByText(/coins\.a/).first().waitFor();
    await tabTo('Edit coins');
    await page.keyboard.press('Enter');
    await tabTo('k0-edit');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('{"a": 2}');
    await tabTo('Save');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Saved "coins"' }).waitFor();
    expect((await call(h.service, 'GET', '/data?userId=kb-1&key=coins', { key: ws.apiKey })).body.data.value).to.deep.equal({ a: 2 });
  });
});
