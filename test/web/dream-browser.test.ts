/**
 * Starting a dream in real headless Chromium (issue 28): the navigation's Dreams link → "Start a dream…" →
 * operator login → the form (sessions, instructions) → the dream's page, which shows it completed (the
 * scripted Messages API on 127.0.0.1 plays Claude, reached through ANTHROPIC_BASE_URL as `memgit dream`
 * reaches it) → its review → back to the dream. Main (checked with git) is untouched. No CSP violation, no
 * page error.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { Browser } from 'playwright-core';
import { ScriptedServer } from '../../src/agent/scripted-server';
import { launchChromium } from '../support/chromium';
import { startServer, RunningServer } from '../../src/web/server';
import { operatorRoutes } from '../../src/web/routes/operator';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir } from '../store/git-helpers';

const TOKEN = 'dream-browser-operator-token-5581';
let store: MemoryStore;
let dir: string;
let server: RunningServer;
let browser: Browser;
let scripted: ScriptedServer;
const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };

const call = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

beforeAll(async () => {
  dir = makeTempDir('memgit-dream-browser-');
  store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  await store.execute(call('toolu_a1', { command: 'create', path: '/memories/prefs.md', file_text: '- Editor: vim\n' }), { session: 'sess_a' });
  await store.execute(call('toolu_b1', { command: 'create', path: '/memories/prefs-2.md', file_text: '- Editor: emacs now\n' }), { session: 'sess_b' });
  scripted = await ScriptedServer.start([
    { content: [{ type: 'tool_use', id: 'toolu_d1', name: 'memory', input: { command: 'str_replace', path: '/memories/prefs.md', old_str: '- Editor: vim', new_str: '- Editor: emacs (per session sess_b)' } }] },
    { content: [{ type: 'tool_use', id: 'toolu_d2', name: 'memory', input: { command: 'delete', path: '/memories/prefs-2.md' } }] },
    { content: [{ type: 'text', text: 'Merged the editor notes.' }] },
  ]);
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test-not-a-real-key';
  process.env.ANTHROPIC_BASE_URL = scripted.url;
  server = await startServer({ store, port: 0, log: () => undefined, routes: [operatorRoutes({ token: TOKEN })] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await scripted?.close();
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (saved.key === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = saved.key;
  if (saved.url === undefined) delete process.env.ANTHROPIC_BASE_URL;
  else process.env.ANTHROPIC_BASE_URL = saved.url;
});

const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trimEnd();

it('starts a dream from the UI, sees it complete, and follows it to its review and back', async () => {
  const mainBefore = git('rev-parse', 'main');
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
  });

  await page.goto(`${server.url}/`);
  await page.click('nav.nav >> text=Dreams');
  await page.waitForURL(/\/dreams$/);
  await expect(page.locator('table.dreams').innerText()).resolves.toContain('No dreams yet.');
  await page.getByRole('link', { name: 'Start a dream…' }).click();

  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();

  await page.waitForURL(/\/dreams\/new$/);
  await page.getByLabel(/^Sessions/).fill('sess_a, sess_b');
  await page.getByLabel(/^Instructions/).fill('Prefer the newest editor.');
  await page.getByRole('button', { name: 'Start the dream' }).click();

  await page.waitForURL(/\/dreams\/drm_[0-9a-f]{24}$/);
  const id = /drm_[0-9a-f]{24}/.exec(page.url())![0];
  // The dream runs in the background: reload its page until it has ended.
  for (let tries = 0; tries < 100; tries++) {
    if (/^Status\s+(completed|failed|canceled)/m.test(await page.locator('dl.facts').innerText())) break;
    await page.waitForTimeout(100);
    await page.reload();
  }
  const facts = await page.locator('dl.facts').innerText();
  expect(facts).toMatch(/^Status\s+completed/m);
  expect(facts).toContain('Prefer the newest editor.');
  expect(facts).toMatch(/sess_a, sess_b/);

  const reviewId = store.dream(id).outputs[0].review_id;
  await page.getByRole('link', { name: reviewId }).click();
  await page.waitForURL(new RegExp(`/reviews/${reviewId}$`));
  await expect(page.locator('body').innerText()).resolves.toContain('toolu_d1');
  await page.getByRole('link', { name: id }).click();
  await page.waitForURL(new RegExp(`/dreams/${id}$`));

  // Main did not move; the dream's two calls are on its branch.
  expect(git('rev-parse', 'main')).toBe(mainBefore);
  expect(git('log', '--format=%s', `main..refs/heads/dream/${id}`)).toBe('toolu_d2\ntoolu_d1');
  expect(problems).toEqual([]);
  await context.close();
}, 120_000);
