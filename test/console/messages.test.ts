// A player's messages in the console, in Debian's Chromium against the real service: the
// Messages page reached from the workspace's navigation (a user id typed, the waiting messages
// listed, one sent from the JSON editor, one deleted and then all, each confirmed), a full inbox
// and a message too large said in the console's words next to the send button, the player
// page's "Messages waiting" panel, and all of it from the keyboard alone. Each page: axe-core and
// a screenshot at 1280x800 and 390x844. What the console did is read back through the public API.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomSuffix } from './random-name.js';
import { checkBothSizes, openTab, signIn, useConsolePage } from './support.js';

interface Waiting {
  id: string;
  message: unknown;
  sentAt: string;
  expiresAt: string;
}

describe('operator console: messages to players', function () {
  this.timeout(90_000);
  // A small inbox and a small message, so that both refusals are quick to reach.
  const h = useService({ ADMIN_TOKEN, MESSAGES_MAX_WAITING: '3', MESSAGE_MAX_BYTES: '256' });
  const ui = useConsolePage();
  let page: Page;
  beforeEach(() => {
    page = ui.page;
  });

  const url = (path: string) => `${h.service.opsUrl}${path}`;
  const workspace = (name: string) => testOps(h.redis).createWorkspace({ name: `${name} ${randomSuffix()}`, plan: 'pro' });
  const send = (key: string, userId: string, message: unknown) => call(h.service, 'POST', '/messages', { key, body: { userId, message } });
  const waiting = async (key: string, userId: string): Promise<Waiting[]> => {
    const res = await call(h.service, 'GET', `/messages?userId=${userId}`, { key });
    expect(res.status).to.equal(200);
    return res.body.data.messages as Waiting[];
  };
  const status = (text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();

  it('lists, sends (invalid JSON refused in place), deletes one and then all, each confirmed, from the Messages page', async () => {
    const ws = await workspace('Messages');
    expect((await send(ws.apiKey, 'gifted', { gift: { item: 'sword', level: 3 } })).status).to.equal(200);
    expect((await send(ws.apiKey, 'gifted', 'welcome back')).status).to.equal(200);

    await page.goto(url(`/console/workspaces/${ws.workspaceId}`));
    await signIn(page);
    await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('heading', { name: /^Messages/, level: 1 }).waitFor();
    expect(page.url()).to.equal(url(`/console/workspaces/${ws.workspaceId}/messages`));
    expect(await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Messages' }).getAttribute('aria-current')).to.equal('page');
    await page.getByLabel('User id').fill('gifted');
    await page.getByRole('button', { name: 'Show messages' }).click();
    const count = page.getByTestId('messages-count');
    await count.filter({ hasText: '2 messages waiting for player gifted, oldest first.' }).waitFor();
    expect(page.url()).to.equal(url(`/console/workspaces/${ws.workspaceId}/messages/gifted`));
    const [first, second] = await waiting(ws.apiKey, 'gifted');
    expect(await page.getByRole('group', { name: `Message ${first!.id}` }).textContent()).to.include('"sword"').and.include('level');
    expect(await page.getByRole('group', { name: `Message ${second!.id}` }).textContent()).to.include('"welcome back"');
    await checkBothSizes(page, 'messages', () => count.waitFor());

    const sendGroup = page.getByRole('group', { name: 'Send a message' });
    const editor = page.getByLabel('Message (JSON)');
    const sendButton = page.getByRole('button', { name: 'Send message' });
    await editor.fill('{"refund": 500,}');
    await sendGroup.getByText(/^Not valid JSON: line 1, column 16/).waitFor();
    expect(await sendButton.isDisabled()).to.equal(true);
    await editor.fill('{"refund": 500, "note": "sorry for the outage"}');
    await page.getByLabel(/^Waits for \(days/).fill('7');
    await sendButton.click();
    await status(/^Sent msg_\d{19} to player gifted; it waits until /);
    await count.filter({ hasText: '3 messages waiting' }).waitFor();
    const third = (await waiting(ws.apiKey, 'gifted'))[2]!;
    expect(third.message).to.deep.equal({ refund: 500, note: 'sorry for the outage' });
    expect(Date.parse(third.expiresAt) - Date.parse(third.sentAt)).to.equal(7 * 86_400_000);
    expect(await editor.inputValue()).to.equal(''); // ready for the next one

    // Deleting one asks first; dismissed, nothing is deleted.
    ui.answer = 'dismiss';
    await page.getByRole('button', { name: `Delete message ${first!.id}` }).click();
    expect(ui.asked).to.deep.equal([`Delete message ${first!.id} of player gifted? No game server will get it.`]);
    expect(await waiting(ws.apiKey, 'gifted')).to.have.length(3);
    ui.answer = 'accept';
    await page.getByRole('button', { name: `Delete message ${first!.id}` }).click();
    await status(`Deleted message ${first!.id}.`);
    await count.filter({ hasText: '2 messages waiting' }).waitFor();
    expect((await waiting(ws.apiKey, 'gifted')).map((m) => m.id)).to.deep.equal([second!.id, third.id]);

    await page.getByRole('button', { name: 'Delete all 2 messages' }).click();
    expect(ui.asked[2]).to.equal('Delete all 2 messages waiting for player gifted? No game server will get them.');
    await status('Deleted 2 messages.');
    await count.filter({ hasText: 'No messages waiting for player gifted.' }).waitFor();
    expect(await waiting(ws.apiKey, 'gifted')).to.deep.equal([]);

    const audit = (await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&action=player.*`)).body.data as Array<{ action: string; actor: string }>;
    expect(audit.filter((a) => a.actor === 'console').map((a) => a.action)).to.include.members(['player.message', 'player.messages.delete', 'player.messages.view']);
  });

  it('says in its own words, next to the send button, that the inbox is full or the message too large, and sends nothing', async () => {
    const ws = await workspace('Inbox');
    for (let i = 0; i < 3; i++) expect((await send(ws.apiKey, 'full', { n: i })).status).to.equal(200);
    await page.goto(url(`/console/workspaces/${ws.workspaceId}/messages/full`));
    await signIn(page);
    await page.getByTestId('messages-count').filter({ hasText: '3 messages waiting' }).waitFor();
    const sendGroup = page.getByRole('group', { name: 'Send a message' });
    await page.getByLabel('Message (JSON)').fill('{"n": 3}');
    await page.getByRole('button', { name: 'Send message' }).click();
    await sendGroup.getByRole('alert').filter({ hasText: 'Not sent: player full already has as many messages waiting as a player may hold (MESSAGES_MAX_WAITING). Delete some, or wait until a game server processes them. (INBOX_FULL 409)' }).waitFor();
    expect(await page.getByLabel('Message (JSON)').inputValue()).to.equal('{"n": 3}'); // kept, to send later
    expect(await waiting(ws.apiKey, 'full')).to.have.length(3);
    await checkBothSizes(page, 'messages-inbox-full', () => sendGroup.getByRole('alert').waitFor());

    await page.getByRole('button', { name: 'Delete all 3 messages' }).click();
    await status('Deleted 3 messages.');
    const large = JSON.stringify({ text: 'x'.repeat(300) });
    await page.getByLabel('Message (JSON)').fill(large);
    await page.getByRole('button', { name: 'Send message' }).click();
    await sendGroup.getByRole('alert').filter({ hasText: `Not sent: the message is too large. The message is ${large.length} bytes as JSON, more than the 256 a message may hold` }).waitFor();
    expect(await sendGroup.getByRole('alert').textContent()).to.match(/\(PAYLOAD_TOO_LARGE 413\)$/);
    expect(await waiting(ws.apiKey, 'full')).to.deep.equal([]);

    // A wait that is not whole days is refused in place, before anything is sent.
    await page.getByLabel(/^Waits for \(days/).fill('1.5');
    await sendGroup.getByText('Days must be a whole number from 1.').waitFor();
    expect(await page.getByRole('button', { name: 'Send message' }).isDisabled()).to.equal(true);
  });

  it("shows a player's waiting messages on the player page (send, delete, and a link to the Messages page)", async () => {
    const ws = await workspace('Player messages');
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p1', key: 'coins', value: 5 } });
    await send(ws.apiKey, 'p1', { gift: 'potion' });
    const [gift] = await waiting(ws.apiKey, 'p1');
    await page.goto(url(`/console/workspaces/${ws.workspaceId}/players/p1`));
    await signIn(page);
    await openTab(page, 'Messages');
    expect(page.url()).to.equal(url(`/console/workspaces/${ws.workspaceId}/players/p1?tab=messages`));
    const panel = page.getByRole('region', { name: 'Messages waiting' });
    await panel.getByTestId('messages-count').filter({ hasText: '1 message waiting for player p1' }).waitFor();
    expect(await panel.getByRole('group', { name: `Message ${gift!.id}` }).textContent()).to.include('"potion"');
    await checkBothSizes(page, 'player-messages', () => panel.getByTestId('messages-count').waitFor());

    await panel.getByLabel('Message (JSON)').fill('{"gift": "shield"}');
    await panel.getByRole('button', { name: 'Send message' }).click();
    await panel.getByRole('status').filter({ hasText: /^Sent msg_/ }).waitFor();
    await panel.getByTestId('messages-count').filter({ hasText: '2 messages waiting' }).waitFor();
    expect((await waiting(ws.apiKey, 'p1')).map((m) => m.message)).to.deep.equal([{ gift: 'potion' }, { gift: 'shield' }]);
    await panel.getByRole('button', { name: `Delete message ${gift!.id}` }).click();
    await panel.getByRole('status').filter({ hasText: `Deleted message ${gift!.id}.` }).waitFor();
    expect((await waiting(ws.apiKey, 'p1')).map((m) => m.message)).to.deep.equal([{ gift: 'shield' }]);
    // The player's data is untouched by all of it.
    expect((await call(h.service, 'GET', '/data?userId=p1', { key: ws.apiKey })).body.data).to.deep.equal({ coins: 5 });

    await panel.getByRole('link', { name: 'Open on the Messages page' }).click();
    await page.getByRole('heading', { name: 'Messages waiting for player p1' }).waitFor();
    expect(page.url()).to.equal(url(`/console/workspaces/${ws.workspaceId}/messages/p1`));
    await page.getByRole('link', { name: 'Open player p1' }).click();
    await page.getByRole('heading', { name: 'Player p1' }).waitFor();
  });

  it('works from the keyboard alone: the Messages entry, a user id, send, delete one, delete all (the only one left)', async () => {
    const ws = await workspace('Keyboard messages');
    await send(ws.apiKey, 'kb', { n: 1 });
    const [one] = await waiting(ws.apiKey, 'kb');
    await page.goto(url(`/console/workspaces/${ws.workspaceId}`));
    await signIn(page);
    await page.getByRole('tab', { name: 'Overview' }).waitFor();
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent?.trim() || '');
    async function tabTo(what: string): Promise<void> {
      for (let i = 0; i < 80 && (await focused()) !== what; i++) await page.keyboard.press('Tab');
      expect(await focused()).to.equal(what);
    }
    await tabTo('Messages');
    await page.keyboard.press('Enter');
    await tabTo('messages-user');
    await page.keyboard.type('kb');
    await page.keyboard.press('Enter');
    const count = page.getByTestId('messages-count');
    await count.filter({ hasText: '1 message waiting for player kb' }).waitFor();

    await tabTo('msg-new');
    await page.keyboard.type('{"n": 2}');
    await tabTo('Send message');
    await page.keyboard.press('Enter');
    await count.filter({ hasText: '2 messages waiting' }).waitFor();
    expect((await waiting(ws.apiKey, 'kb')).map((m) => m.message)).to.deep.equal([{ n: 1 }, { n: 2 }]);

    await tabTo(`Delete message ${one!.id}`);
    await page.keyboard.press('Enter');
    await count.filter({ hasText: '1 message waiting' }).waitFor();
    expect((await waiting(ws.apiKey, 'kb')).map((m) => m.message)).to.deep.equal([{ n: 2 }]);

    await tabTo('Delete the only message');
    await page.keyboard.press('Enter');
    await count.filter({ hasText: 'No messages waiting for player kb.' }).waitFor();
    expect(await waiting(ws.apiKey, 'kb')).to.deep.equal([]);
    expect(ui.asked).to.deep.equal([
      `Delete message ${one!.id} of player kb? No game server will get it.`,
      'Delete the only message waiting for player kb? No game server will get it.',
    ]);
  });
});
