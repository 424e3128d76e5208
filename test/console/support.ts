// The browser tests' helpers: the console built once per run, Debian's Chromium driven by
// playwright-core (one browser per test file), sign-in, the axe-core check, and screenshots
// kept as test artifacts in artifacts/console/ (git-ignored: `npm test` leaves the tree as it
// found it, where writing them into docs/ rewrote tracked files on every run).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildConsole } from '../../console/build.js';
import { ADMIN_TOKEN } from '../support/admin.js';
import { recordResponse } from '../support/response-recorder.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SCREENSHOT_DIR = join(root, 'artifacts', 'console');

let built: ReturnType<typeof buildConsole> | undefined;
/** Builds the page once per test run, so the tests never serve a stale build. */
export function ensureConsoleBuilt(): ReturnType<typeof buildConsole> {
  built ??= buildConsole();
  return built;
}

function chromiumPath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim().split('\n')[0]!;
  } catch {
    throw new Error('No chromium on PATH: apt-get install -y chromium (.ci/run does it)');
  }
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Signs in through the form, as a person would. */
export async function signIn(page: Page, token = ADMIN_TOKEN): Promise<void> {
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core on the page as it stands: no serious or critical violation. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) still holds.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `${what}: ${JSON.stringify(serious, null, 1)}`).to.deep.equal([]);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

export const DESKTOP = { width: 1366, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** Opens a tab of the page's tab bar (the workspace's, the player's) and waits for it to be the one shown. */
export async function openTab(page: Page, name: string): Promise<void> {
  // A tab's name may end in its count ("API keys 2").
  const tab = page.getByRole('tab', { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\d+)?$`) });
  await tab.click();
  await page.locator(`[role="tab"][aria-selected="true"]`, { hasText: name }).waitFor();
}

/** Elements that stick out past the screen's right edge (none may, on a phone: tables are cards there). */
export function widerThanScreen(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest('.chart') && !el.closest('.grid-wrap'))
      .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`),
  );
}

/**
 * A page as it stands, at both sizes: axe-core (no serious or critical violation) and a
 * screenshot `<name>-desktop.png` at 1366x900, then the same at a phone's 390x844 (`-phone`),
 * where nothing may stick out sideways; `ready` waits for what the page must show at each size.
 */
export async function checkBothSizes(page: Page, name: string, ready: () => Promise<unknown> = async () => {}): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await ready();
  await expectAccessible(page, `${name} at 1366x900`);
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize(PHONE);
  await ready();
  expect(await widerThanScreen(page), `${name}: elements wider than a phone's screen`).to.deep.equal([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), `${name} scrolls sideways`).to.be.at.most(0);
  await expectAccessible(page, `${name} at 390x844`);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(DESKTOP);
}

/**
 * Every admin API answer the page receives is recorded, like the tests' own calls, for the
 * end-of-run check against the OpenAPI document.
 */
export function recordAdminAnswers(context: BrowserContext): void {
  context.on('response', (res) => {
    const url = res.url();
    if (!new URL(url).pathname.startsWith('/admin/v1/')) return;
    const method = res.request().method();
    void res.text().then(
      (text) => recordResponse(url, method, new Response(null, { status: res.status(), headers: res.headers() }), text),
      () => {}, // a download the browser streamed to disk: its body is not kept
    );
  });
}

/** The browser of a test file and the page of the test under way (see useConsolePage). */
export interface ConsolePage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** What each confirmation dialog asked, in this test. */
  readonly asked: string[];
  /** Whether the next confirmations are accepted (the default, reset before each test) or dismissed. */
  answer: 'accept' | 'dismiss';
}

/**
 * One Chromium for the describe block, and for each test a fresh context (its own cookies) and
 * page at `viewport`, the admin answers it receives recorded for the OpenAPI check, and every
 * confirmation dialog recorded and answered as `answer` says.
 */
export function useConsolePage(viewport: { width: number; height: number } = DESKTOP): ConsolePage {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let asked: string[] = [];
  const ui: ConsolePage = {
    get context() {
      if (!context) throw new Error('useConsolePage: no test is running');
      return context;
    },
    get page() {
      if (!page) throw new Error('useConsolePage: no test is running');
      return page;
    },
    get asked() {
      return asked;
    },
    answer: 'accept',
  };
  before(async () => {
    await ensureConsoleBuilt();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    context = await browser!.newContext({ viewport });
    recordAdminAnswers(context);
    page = await context.newPage();
    asked = [];
    ui.answer = 'accept';
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void (ui.answer === 'accept' ? dialog.accept() : dialog.dismiss());
    });
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
    page = undefined;
  });
  return ui;
}
