// The console's Erasures page and a workspace's Games section, in Debian's Chromium against the
// real service: erase a player (confirmed by typing the user id) and follow the job to done; a
// webhook request for a game no workspace serves shown as unmapped with its game, then finished
// by mapping the game on the workspace's page; a request for a game nobody will serve dismissed;
// the overview's recent erasures (state and progress, cards on a phone, linked to the page); the
// Games tab's erasure player names, saved, refused when bad, and used by the next erasure.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { ERASURE_ENV, erasureNotification, freshGameId, freshUserId, keysOfPlayer, postWebhook, waitForJob } from '../support/erasure.js';
import { call, testConfig, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, expectAccessible, signIn, useConsolePage } from './support.js';

describe('operator console: erasures', function () {
  this.timeout(60_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN });
  const ui = useConsolePage({ width: 1200, height: 800 });
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });

  const ops = () => testOps(h.redis, { config: testConfig(ERASURE_ENV) });

  it('erases a player once its user id is typed, and shows the job until it is done', async () => {
    const ws = await ops().createWorkspace({ name: `erase-${randomSuffix()}`, plan: 'pro' });
    // A name as long as a name may be widens the workspace list's options: the form still fits a phone.
    await ops().createWorkspace({ name: `a studio whose workspace name runs on and on until the limit ${randomSuffix()}`.padEnd(100, '.'), plan: 'free' });
    const userId = freshUserId();
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: 5 } });
    await page.goto(`${h.service.opsUrl}/console/erasures`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Erase a player' }).waitFor();
    await page.getByLabel('User id', { exact: true }).fill(String(userId));
    await page.getByLabel('Workspace', { exact: true }).selectOption(ws.workspaceId);
    const erase = page.getByRole('button', { name: 'Erase player' });
    expect(await erase.isDisabled()).to.equal(true);
    await page.getByLabel(`To erase player ${userId} in ${ws.workspaceId}, type`).fill(String(userId));
    await erase.click();
    const job = page.getByRole('region', { name: /^Erasure er_/ });
    await job.getByTestId('job-state').filter({ hasText: 'done' }).waitFor();
    expect(await job.getByRole('status').textContent()).to.equal('finished: 1 of 1 workspaces, 3 keys deleted');
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    await page.getByTestId('erasure-counts').waitFor();
    await page.getByRole('row').filter({ hasText: 'finished: 1 of 1 workspaces' }).first().waitFor();
    // The jobs table is cards on a phone: no job, and no Dismiss, in a sideways scroll.
    await checkBothSizes(page, 'erasures', () => page.getByTestId('erasure-counts').waitFor());
  });

  it('shows a request for an unmapped game, finishes it when the game is mapped on the workspace page, and dismisses another', async () => {
    const ws = await ops().createWorkspace({ name: `games-${randomSuffix()}`, plan: 'pro' });
    const userId = freshUserId();
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: 5 } });
    const [mapLater, never] = [freshGameId(), freshGameId()];
    const waiting = (await postWebhook(h.service.baseUrl, erasureNotification(userId, [mapLater]))).body.data.jobId as string;
    const abandoned = (await postWebhook(h.service.baseUrl, erasureNotification(freshUserId(), [never]))).body.data.jobId as string;
    await waitForJob(h.redis, waiting, ['unmapped']);
    await waitForJob(h.redis, abandoned, ['unmapped']);

    await page.goto(`${h.service.opsUrl}/console/erasures`);
    await signIn(page);
    await page.getByLabel('State').selectOption('unmapped');
    await page.getByRole('button', { name: 'Show jobs' }).click();
    const row = page.getByRole('row').filter({ hasText: waiting });
    await row.getByText(`Games no workspace serves: ${mapLater}`).waitFor();
    await checkBothSizes(page, 'erasures-unmapped', () => row.waitFor());

    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}?tab=games`);
    await page.getByRole('heading', { name: 'Games', exact: true }).waitFor();
    await page.getByLabel('Game ids (spaces or commas between)').fill(String(mapLater));
    await page.getByRole('button', { name: 'Save games' }).click();
    await page.getByRole('status').filter({ hasText: `Serves games ${mapLater}. 1 erasure request(s) that waited for these games run again.` }).waitFor();
    await expectAccessible(page, 'workspace games');
    await waitForJob(h.redis, waiting);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);

    await page.goto(`${h.service.opsUrl}/console/erasures`);
    await page.getByLabel('State').selectOption('unmapped');
    await page.getByRole('button', { name: 'Show jobs' }).click();
    await page.getByRole('button', { name: `Dismiss ${abandoned}` }).click();
    await page.getByRole('status').filter({ hasText: `Dismissed ${abandoned}.` }).waitFor();
    expect((await h.redis.hgetall(`pds:{erasure}:job:${abandoned}`))['state']).to.equal('done');
  });

  it('sets the players named after the user id on the Games tab, shows a bad template\'s 400, and the next erasure erases them', async () => {
    const ws = await ops().createWorkspace({ name: `names-${randomSuffix()}`, plan: 'pro' });
    await page.goto(`${h.service.opsUrl}/console/workspaces/${ws.workspaceId}?tab=games`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Players named after the user id' }).waitFor();
    const field = page.getByLabel('Templates with {userId} (spaces between)');
    await field.fill('Player_{userId} Player:{userId}');
    await page.getByRole('button', { name: 'Save names' }).click();
    await page.getByText('A-Z a-z 0-9 _ . -').first().waitFor();
    expect(await h.redis.exists(`pds:ws:{${ws.workspaceId}}:erasure-players`)).to.equal(0);
    await field.fill('Player_{userId} PlayerData_v2..Player_{userId}');
    await page.getByRole('button', { name: 'Save names' }).click();
    await page.getByRole('status').filter({ hasText: 'Erasures also erase Player_{userId}, PlayerData_v2..Player_{userId}.' }).waitFor();
    await expectAccessible(page, 'workspace erasure player names');
    await page.reload();
    await page.getByRole('heading', { name: 'Players named after the user id' }).waitFor();
    await page.waitForFunction(() => (document.getElementById('erasure-players') as HTMLInputElement | null)?.value === 'Player_{userId} PlayerData_v2..Player_{userId}');

    const userId = freshUserId();
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: `Player_${userId}`, key: 'Coins', value: 5 } });
    const requested = await adminCall(h.service, 'POST', '/erasures', { body: { userId, workspaceId: ws.workspaceId } });
    await waitForJob(h.redis, requested.body.data.jobId as string);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, `Player_${userId}`)).to.deep.equal([]);
  });

  it('shows the newest erasures on the overview with their state and progress, as cards on a phone, linked to the erasures page', async () => {
    const ws = await ops().createWorkspace({ name: `overview-${randomSuffix()}`, plan: 'pro' });
    const userId = freshUserId();
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: 5 } });
    const requested = await adminCall(h.service, 'POST', '/erasures', { body: { userId, workspaceId: ws.workspaceId } });
    expect(requested.status).to.equal(201);
    const done = requested.body.data.jobId as string;
    await waitForJob(h.redis, done);
    const game = freshGameId();
    const waiting = (await postWebhook(h.service.baseUrl, erasureNotification(freshUserId(), [game]))).body.data.jobId as string;
    await waitForJob(h.redis, waiting, ['unmapped']);

    await page.goto(`${h.service.opsUrl}/console/overview`);
    await signIn(page);
    const panel = page.getByRole('region', { name: 'Recent erasures' });
    const cards = panel.getByRole('listitem');
    // Newest first: the webhook's request, then the operator's.
    await cards.first().filter({ hasText: waiting }).waitFor();
    expect(await cards.count()).to.be.within(2, 5);
    expect(await cards.first().textContent()).to.include('unmapped').and.include(`Waits for a workspace serving game ${game}.`).and.include('webhook');
    const erased = cards.nth(1);
    expect(await erased.textContent()).to.include(done).and.include('done').and.include('finished: 1 of 1 workspaces, 3 keys deleted').and.include(`workspace ${ws.workspaceId}`);
    expect(await panel.getByRole('progressbar', { name: `Progress of ${done}` }).evaluate((el: HTMLProgressElement) => [el.value, el.max])).to.deep.equal([1, 1]);
    expect(await panel.getByTestId('overview-erasure-counts').textContent()).to.match(/^\d+ pending, \d+ failed, [1-9]\d* waiting for a game's workspace; [1-9]\d* done of [1-9]\d* requested\.$/);
    await checkBothSizes(page, 'overview-erasures', () => cards.first().waitFor());

    // From the keyboard alone, the panel's link opens the erasures page.
    const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    for (let i = 0; i < 120 && (await focused()) !== 'All erasures'; i++) await page.keyboard.press('Tab');
    expect(await focused()).to.equal('All erasures');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Erasures', level: 1 }).waitFor();
    await page.getByRole('row').filter({ hasText: done }).waitFor();
  });
});
