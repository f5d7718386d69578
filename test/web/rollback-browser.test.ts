/**
 * Reverting the demo's false "fact" from the UI in real headless Chromium: commit page → "Revert this
 * call…" → operator login → confirmation page with the preview diff and a reason → the new operator
 * commit, linked both ways; the session's later good writes stay.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { startServer, RunningServer } from '../../src/web/server';
import { rollbackRoutes } from '../../src/web/routes/operator';
import type { MemoryStore } from '../../src/store/memory-store';
import { buildShowcase, FALSE_FACT } from './showcase';

const TOKEN = 'browser-test-operator-token-42';
const SHOTS = process.env.MEMGIT_SCREENSHOTS ? path.resolve(__dirname, '../../docs/screenshots') : null;

let store: MemoryStore;
let dir: string;
let falseFactCall: string;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  ({ store, dir, falseFactCall } = await buildShowcase());
  server = await startServer({ store, port: 0, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trimEnd();

it('reverts the false fact in a few clicks: log in, preview, confirm, see the operator commit', async () => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  const headBefore = git('rev-parse', 'HEAD');

  await page.goto(`${server.url}/commits/${falseFactCall}`);
  await page.getByRole('link', { name: 'Revert this call…' }).click();

  // Not logged in yet: the login page, which comes back to the confirmation afterwards.
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();

  await page.waitForURL(/\/rollback\/revert\?ref=/);
  await expect(page.locator('h1').innerText()).resolves.toBe(`revert ${falseFactCall}`);
  const removed = await page.locator('tr.del td.tx').allInnerTexts();
  expect(removed).toEqual([`Bank: ${FALSE_FACT}`]);
  const added = await page.locator('tr.add td.tx').allInnerTexts();
  expect(added).toEqual(['Bank: IBAN PT50 0002 0123 1234 5678 9015 4']);
  expect(git('rev-parse', 'HEAD')).toBe(headBefore); // the preview wrote nothing
  await page.getByLabel(/Reason/).fill('prompt-injected bank details');
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'rollback-confirm.png'), fullPage: true });
  await page.getByRole('button', { name: `revert ${falseFactCall}` }).click();

  // The new commit's page: an operator action with its reason, linking to the call it reverts.
  await page.waitForURL(/\/commits\/[0-9a-f]{40}$/);
  const commit = page.url().split('/').pop()!;
  expect(commit).toBe(git('rev-parse', 'HEAD'));
  await expect(page.locator('.cmd-operator').first().innerText()).resolves.toBe('operator');
  await expect(page.locator('dd', { hasText: 'prompt-injected bank details' }).count()).resolves.toBe(1);
  await expect(page.locator('dd', { hasText: 'operator:sam' }).count()).resolves.toBe(1);
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'rollback-commit.png'), fullPage: true });

  // And back: the reverted call says who reverted it.
  await page.locator('dt:text("Reverts") + dd a').click();
  await page.waitForURL((url) => url.pathname !== `/commits/${commit}`);
  await expect(page.locator('h1').innerText()).resolves.toContain(falseFactCall);
  await expect(page.locator('dt:text("Reverted by") + dd a').getAttribute('href')).resolves.toBe(`/commits/${commit}`);

  // The memory: the false fact is gone, the same session's later good writes stay.
  expect(git('show', 'HEAD:memories/vendors/acme.md')).toContain('Bank: IBAN PT50 0002 0123 1234 5678 9015 4');
  expect(git('show', 'HEAD:memories/vendors/acme.md')).not.toContain('EVIL');
  expect(git('show', 'HEAD:memories/user/preferences.md')).toContain('travelling to Berlin');
  expect(git('show', 'HEAD:memories/projects/q4-launch-meetings.md')).toContain('Translations: DE and FR done');
  expect(git('status', '--porcelain')).toBe('');
  expect(problems).toEqual([]);
  await context.close();
});

it('a page on another origin (same site, another port) cannot make a logged-in operator revert anything', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/login`);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${server.url}/`);
  const confirm = await page.goto(`${server.url}/rollback/reset?to=${falseFactCall}`);
  expect(confirm?.status()).toBe(200); // logged in: the session cookie works
  const headBefore = git('rev-parse', 'HEAD');

  // The attacker's page posts a form (even with a stolen-looking field set) to the memgit server.
  const evil = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<form method="post" action="${server.url}/rollback/reset"><input name="to" value="${falseFactCall}"><input name="_csrf" value="guess"><button>go</button></form>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  try {
    await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().startsWith(server.url)), page.getByRole('button', { name: 'go' }).click()]);
    expect(response.status()).toBe(403);
    await expect(page.locator('main').innerText()).resolves.toMatch(/cross-site request refused|another origin/);
  } finally {
    await new Promise<void>((resolve) => evil.close(() => resolve()));
  }
  expect(git('rev-parse', 'HEAD')).toBe(headBefore);
  await context.close();
});
