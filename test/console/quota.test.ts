// The storage quota's warnings in the console, in Debian's Chromium against the real service:
// a workspace at 80% and then 95% of its quota has a banner with its percentage on its page
// (on every tab) and is listed, linked, in the overview's "Near their storage quota"; a workspace
// well under its quota has neither.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, openTab, signIn, useConsolePage } from './support.js';

describe('operator console: warnings before the storage quota', function () {
  this.timeout(60_000);
  const h = useService({ ADMIN_TOKEN, HISTORY_MAX_VERSIONS: '0', STORAGE_QUOTA_FREE_BYTES: '50000', STORAGE_FLUSH_MS: '50', STORAGE_REFRESH_MS: '100' });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });
  const url = (path: string) => `${h.service.opsUrl}${path}`;
  const settle = () => new Promise((r) => setTimeout(r, 300));

  it('shows the percentage in a banner on the workspace page and lists the workspace on the overview', async () => {
    const full = await testOps(h.redis).createWorkspace({ name: `Nearly full ${randomSuffix()}`, plan: 'free' });
    const light = await testOps(h.redis).createWorkspace({ name: `Light ${randomSuffix()}`, plan: 'free' });
    const save = async (key: string, chars: number) =>
      expect((await call(h.service, 'POST', '/data/set', { key, body: { userId: 'p', key: 'save', value: 'x'.repeat(chars) } })).status).to.equal(200);
    // In Redis bytes, as the quota weighs them (1.2 x counted + 150 B a player): 42,500 B, 85%.
    await save(full.apiKey, 35_270);
    await save(light.apiKey, 1_000);
    await settle();

    await page.goto(url(`/console/workspaces/${full.workspaceId}`));
    await signIn(page);
    const banner = page.locator('#quota-banner');
    await banner.waitFor();
    expect(await banner.getAttribute('data-level')).to.equal('80');
    expect(await banner.textContent()).to.match(/85(\.\d)?% of quota/).and.include('Near its storage quota');
    await checkBothSizes(page, 'quota-banner', () => banner.waitFor());
    await openTab(page, 'API keys');
    expect(await banner.isVisible()).to.equal(true);

    await save(full.apiKey, 39_853);
    await settle();
    await page.reload();
    await banner.waitFor();
    expect(await banner.getAttribute('data-level')).to.equal('95');
    expect(await banner.textContent()).to.match(/96(\.\d)?% of quota/);

    await page.goto(url(`/console/workspaces/${light.workspaceId}`));
    await page.getByRole('heading', { level: 1 }).filter({ hasText: light.name }).waitFor();
    await page.locator('#storage-meter').waitFor();
    expect(await banner.count()).to.equal(0);

    await page.goto(url('/console/overview'));
    const panel = page.getByRole('region', { name: 'Near their storage quota' });
    await panel.getByRole('link', { name: full.name }).waitFor();
    expect(await panel.textContent()).to.match(/96(\.\d)?%/);
    expect(await panel.getByRole('link', { name: light.name }).count()).to.equal(0);
    await panel.getByRole('link', { name: full.name }).click();
    await banner.waitFor();
  });
});
