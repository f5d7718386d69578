/**
 * Ids that new calls may no longer take, in a store written before they were refused: sessions named `.`
 * and `..` and a call whose tool_use id is `..`, planted with isomorphic-git as an older memgit would have
 * written them. A browser resolves `/sessions/..` away (to `/`), so their links carry the id in the query
 * (`/sessions?id=..`) or, for a call, name its commit; in real Chromium, clicking them reaches the
 * session's page and its rollback button.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { MemoryStore } from '../../src/store/memory-store';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { RunningServer, startServer } from '../../src/web/server';
import { forgeCall } from './hostile-stores';

jest.setTimeout(120_000);

const TOKEN = 'old-ids-operator-token-7f3a9c21e4b8';

let dir: string;
let store: MemoryStore;
let server: RunningServer;
let browser: Browser;

const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trimEnd();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-old-ids-'));
  const first = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  const result = await first.execute(
    { type: 'tool_use', id: 'toolu_ordinary', name: 'memory', input: { command: 'create', path: '/memories/notes.md', file_text: 'an ordinary note\n' } },
    { session: 'sess_ordinary' },
  );
  expect(result.is_error).toBeFalsy();
  await first.close();
  // As an older memgit, which took any id of the id alphabet, would have written them.
  await forgeCall(dir, 'toolu_dotdot_1', '..', 'dotdot-1.md');
  await forgeCall(dir, 'toolu_dotdot_2', '..', 'dotdot-2.md');
  await forgeCall(dir, 'toolu_dot_1', '.', 'dot-1.md');
  await forgeCall(dir, '..', 'sess_dotdot_call', 'dotdot-call.md');
  store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  expect(store.history.bySession('..').length).toBe(2);
  expect(store.history.bySession('.').length).toBe(1);
  server = await startServer({ store, port: 0, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('the sessions list links `..` and `.` by query, and the JSON twin answers the same form', async () => {
  const list = await (await fetch(`${server.url}/sessions`)).text();
  expect(list).toContain('href="/sessions?id=.." title="..">');
  expect(list).toContain('href="/sessions?id=." title=".">');
  expect(list).toContain('href="/sessions/sess_ordinary"');
  const json = (await (await fetch(`${server.url}/api/sessions?id=..`)).json()) as { id: string; calls: number };
  expect(json).toMatchObject({ id: '..', calls: 2 });
  const listJson = (await (await fetch(`${server.url}/api/sessions`)).json()) as { sessions: { id: string }[] };
  expect(listJson.sessions.map((s) => s.id).sort()).toEqual(['.', '..', 'sess_dotdot_call', 'sess_ordinary']);
});

it('in Chromium, clicking the session `..` reaches its page, and its rollback button previews rolling back that session', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}/sessions`);
  await page.getByRole('link', { name: '..', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/sessions' && url.searchParams.get('id') === '..');
  await expect(page.locator('h1 code.id').textContent()).resolves.toBe('..');
  await expect(page.locator('.step').count()).resolves.toBe(2);
  await expect(page.locator('main').innerText()).resolves.toContain('dotdot-2.md');
  // The footer's JSON twin is this session's, not the list's.
  await expect(page.getByRole('link', { name: 'this page as JSON' }).getAttribute('href')).resolves.toBe('/api/sessions?id=..');

  const headBefore = git('rev-parse', 'HEAD');
  await page.getByRole('link', { name: 'Roll back this session…' }).click();
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL((url) => url.pathname === '/rollback/session' && url.searchParams.get('session') === '..');
  await expect(page.locator('h1').innerText()).resolves.toBe('rollback-session ..');
  await expect(page.getByRole('button', { name: 'rollback-session ..' }).isVisible()).resolves.toBe(true);
  // Cancel goes back to the same session page, by query.
  await expect(page.locator('a.cancel').getAttribute('href')).resolves.toBe('/sessions?id=..');
  await page.getByRole('button', { name: 'rollback-session ..' }).click();
  await page.waitForURL(/\/commits\/[0-9a-f]{40}$/);
  expect(git('rev-parse', 'HEAD')).not.toBe(headBefore);
  expect(git('ls-tree', '--name-only', 'HEAD', 'memories/')).not.toContain('dotdot-1.md');
  expect(git('ls-tree', '--name-only', 'HEAD', 'memories/')).toContain('dot-1.md');
  expect(errors).toEqual([]);
  await context.close();
});

it('in Chromium, the session `.` and the call `..` are reached by their links too', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/sessions`);
  await page.getByRole('link', { name: '.', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/sessions' && url.searchParams.get('id') === '.');
  await expect(page.locator('h1 code.id').textContent()).resolves.toBe('.');
  await expect(page.getByRole('link', { name: 'Roll back this session…' }).isVisible()).resolves.toBe(true);

  // The call `..`: its link names its commit, which is the call's page.
  const commit = git('log', '--format=%H', '-1', '--grep=^\\.\\.$');
  await page.goto(`${server.url}/commits`);
  await page.locator('a.id', { hasText: /^\.\.$/ }).click();
  await page.waitForURL(`${server.url}/commits/${commit}`);
  await expect(page.locator('h1').innerText()).resolves.toContain('..');
  await expect(page.getByRole('link', { name: 'Revert this call…' }).isVisible()).resolves.toBe(true);
  await context.close();
});
