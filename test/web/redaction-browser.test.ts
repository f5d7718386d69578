/**
 * Erasing a leaked key from the UI in real headless Chromium: the commits list filtered to flagged calls
 * → the flag's link → operator login → the form (prefilled with the call; the operator redacts by text)
 * → a preview of every commit and line, the key masked → confirm → the record. Then the key is gone
 * from the file page and from everything `git log -p --all` shows, and the old commit's URL leads to the
 * rewritten commit with a notice. The key never appears in a URL the browser requested or a page it got.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { startServer, RunningServer } from '../../src/web/server';
import { rollbackRoutes } from '../../src/web/routes/operator';
import type { MemoryStore } from '../../src/store/memory-store';
import { buildShowcase, SHOWCASE_SESSIONS } from './showcase';

const TOKEN = 'redaction-browser-operator-token-8086';
const SHOTS = process.env.MEMGIT_SCREENSHOTS ? path.resolve(__dirname, '../../docs/screenshots') : null;
/** Shaped like an Anthropic API key, so secretlint's recommended rules flag the call that wrote it. */
const SECRET = `sk-ant-api03-Hb4KtW9qLm2XcV7nRz5PdJ8sFg3YaE6uT${'Q'.repeat(58)}AA`;
const SECRET_CORE = SECRET.slice(3, -2);
const LEAK_CALL = 'toolu_01LeakedKeyWrittenHere0001';

let store: MemoryStore;
let dir: string;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  ({ store, dir } = await buildShowcase());
  const later = SHOWCASE_SESSIONS[2];
  const run = async (id: string, input: Record<string, unknown>) => {
    const result = await store.execute({ type: 'tool_use', id, name: 'memory', input }, { session: later });
    if (result.is_error) throw new Error(result.content);
  };
  await run(LEAK_CALL, { command: 'create', path: '/memories/integrations/anthropic.md', file_text: `# Anthropic\nworkspace: launch\nkey: ${SECRET}\nrotate: quarterly\n` });
  await run('toolu_01AfterTheLeakGoodWrite0002', { command: 'insert', path: '/memories/integrations/anthropic.md', insert_line: 4, insert_text: 'owner: Priya' });
  await run('toolu_01AnotherFileLaterWrite003', { command: 'str_replace', path: '/memories/projects/q4-launch.md', old_str: 'Status: in progress', new_str: 'Status: in review' });
  await store.flags.idle();
  await store.flags.catchUp(store.history);
  server = await startServer({ store, port: 0, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trimEnd();

/** Every page the browser got, for the check that none of them held the key. */
async function html(page: Page, pages: string[]): Promise<string> {
  const content = await page.content();
  pages.push(content);
  return content;
}

it('erases a flagged key in a few clicks: flag, login, form, preview, confirm, record; no trace left', async () => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  const urls: string[] = [];
  const pages: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('request', (r) => urls.push(r.url()));
  const headBefore = git('rev-parse', 'HEAD');
  const oldLeakCommit = git('log', '--format=%H', `--grep=^${LEAK_CALL}$`, 'main');
  expect(oldLeakCommit).toMatch(/^[0-9a-f]{40}$/);

  // The commits list, filtered to flagged calls: just the one that wrote the key, with its badge.
  await page.goto(`${server.url}/commits`);
  await page.getByLabel('Flagged calls only').check();
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/\/commits\?.*flagged=1/);
  await expect(page.locator('table.list tbody tr').count()).resolves.toBe(1);
  // The list shows ids short (the full id is the link's title).
  await expect(page.locator('table.list tbody tr a.id').first().getAttribute('title')).resolves.toBe(LEAK_CALL);
  const badge = page.locator('a.badge.flag');
  await expect(badge.innerText()).resolves.toBe('⚑ likely secret');
  await expect(badge.getAttribute('title')).resolves.toMatch(/^flagged: anthropic in \/memories\/integrations\/anthropic\.md line 3: sk-\*+AA/);
  await badge.click();

  // Not logged in yet: the login page, which comes back to the form afterwards.
  await page.waitForURL(/\/login\?next=/);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();

  // The form, prefilled with the flagged call; the operator erases the key itself, everywhere, by text.
  await page.waitForURL(`${server.url}/redact?call=${LEAK_CALL}`);
  await expect(page.locator('h1').innerText()).resolves.toBe('Redact from history');
  await expect(page.locator('input[name="kind"][value="call"]').isChecked()).resolves.toBe(true);
  await expect(page.getByLabel('tool_use id of the call').inputValue()).resolves.toBe(LEAK_CALL);
  await page.getByLabel('this exact text, everywhere').check();
  await page.getByLabel('Text to erase (hidden as you type)').fill(SECRET);
  await page.getByLabel(/^Reason/).fill('Anthropic key pasted into memory; rotated');
  await page.getByRole('button', { name: 'Preview the redaction' }).click();

  // The preview: every commit and line it will change, the key replaced by the marker and only masked.
  await page.waitForURL(`${server.url}/redact/preview`);
  await expect(page.locator('h1').innerText()).resolves.toBe('Preview: redaction r1');
  const items = page.locator('li.redact-item');
  await expect(items.count()).resolves.toBe(2); // the create, and the insert right after (same file, key still in it)
  await expect(items.nth(0).locator('.redact-item-head a.id').first().innerText()).resolves.toBe(LEAK_CALL);
  await expect(items.nth(1).locator('.redact-item-head a.id').first().innerText()).resolves.toBe('toolu_01AfterTheLeakGoodWrite0002');
  const lines = await page.locator('table.redact-lines tbody tr').allInnerTexts();
  expect(lines).toHaveLength(2);
  for (const line of lines) expect(line).toMatch(/^3\s+key: \[redacted \d{4}-\d{2}-\d{2} #r1\]\s+sk-\*{12}AA \(\d+ chars\)$/);
  await expect(page.locator('.lede').innerText()).resolves.toMatch(/^2 versions of memory files in 3 commits will read \[redacted [^\]]+\] where the match was\. History is rewritten from toolu_01LeakedKeyWrittenHere0001 \([0-9a-f]+\) on: 3 commits get new ids/);
  await expect(page.getByRole('link', { name: 'Cancel' }).getAttribute('href')).resolves.toBe('/redactions');
  expect(await html(page, pages)).not.toContain(SECRET_CORE);
  expect(git('rev-parse', 'HEAD')).toBe(headBefore); // the preview wrote nothing
  expect(git('for-each-ref', 'refs/memgit')).toBe('');
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'redaction-preview.png'), fullPage: true });

  // Confirm: history is rewritten and the browser lands on the record.
  await page.getByRole('button', { name: 'Redact: rewrite 3 commits' }).click();
  await page.waitForURL(`${server.url}/redactions/r1`);
  await expect(page.locator('h1').innerText()).resolves.toBe('Redaction r1');
  await expect(page.locator('dt:text("Operator") + dd').innerText()).resolves.toBe('sam');
  await expect(page.locator('dt:text("Reason") + dd').innerText()).resolves.toBe('Anthropic key pasted into memory; rotated');
  await expect(page.locator('dt:text("Matched") + dd').innerText()).resolves.toMatch(/^text, as hmac-sha256:[0-9a-f]{64} \(a hash keyed with a secret only the store that redacted holds/);
  const mapRows = page.locator('table.redaction-map tbody tr');
  await expect(mapRows.count()).resolves.toBe(3);
  await expect(mapRows.nth(0).locator('a.old-id').getAttribute('href')).resolves.toBe(`/commits/${oldLeakCommit}`);
  expect(await html(page, pages)).not.toContain(SECRET_CORE);
  const newHead = git('rev-parse', 'HEAD');
  expect(newHead).not.toBe(headBefore);

  // The audit log lists it.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Redactions' }).click();
  await page.waitForURL(`${server.url}/redactions`);
  const row = page.locator('table.redactions tbody tr');
  await expect(row.count()).resolves.toBe(1);
  await expect(row.locator('td').allInnerTexts()).resolves.toEqual([
    'r1',
    expect.any(String),
    'sam',
    'Anthropic key pasted into memory; rotated',
    expect.stringMatching(/^text hmac-sha25…[0-9a-f]+$/),
    '3',
  ]);

  // The file page: the marker, not the key.
  await page.goto(`${server.url}/files/integrations/anthropic.md`);
  const file = await html(page, pages);
  expect(file).not.toContain(SECRET_CORE);
  await expect(page.locator('main').innerText()).resolves.toMatch(/key: \[redacted \d{4}-\d{2}-\d{2} #r1\]/);
  await expect(page.locator('main').innerText()).resolves.toContain('owner: Priya');

  // git itself finds no trace, in any commit of any ref, nor in any object on disk.
  expect(git('log', '-p', '--all')).not.toContain(SECRET_CORE);
  expect(git('cat-file', '--batch-all-objects', '--batch', '--unordered')).not.toContain(SECRET_CORE);
  expect(git('status', '--porcelain')).toBe('');

  // A bookmark of the old commit leads to its rewritten commit, saying so.
  await page.goto(`${server.url}/commits/${oldLeakCommit}`);
  const notice = page.locator('.rewritten-notice');
  await expect(notice.innerText()).resolves.toMatch(
    new RegExp(`^This commit was rewritten by redaction r1: the link you followed names its old id ${oldLeakCommit}; you are seeing its new id [0-9a-f]{40}\\.$`),
  );
  await expect(page.locator('h1').innerText()).resolves.toContain(LEAK_CALL);
  await notice.getByRole('link', { name: 'r1' }).click();
  await page.waitForURL(`${server.url}/redactions/r1`);

  expect(urls.filter((u) => u.includes(SECRET_CORE) || u.includes(encodeURIComponent(SECRET_CORE)))).toEqual([]);
  expect(pages.join('\n')).not.toContain(SECRET_CORE);
  expect(problems).toEqual([]);
  await context.close();
});

it('Cancel on the preview writes nothing', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/login?next=/redact`);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${server.url}/redact`);
  await page.getByLabel('every version of a file').check();
  await page.getByLabel('File to erase').fill('/memories/projects/q4-launch.md');
  await page.getByLabel(/^Reason/).fill('not really');
  await page.getByRole('button', { name: 'Preview the redaction' }).click();
  await page.waitForURL(`${server.url}/redact/preview`);
  await expect(page.locator('li.redact-item').count()).resolves.toBeGreaterThan(0);
  const head = git('rev-parse', 'HEAD');
  const audit = git('for-each-ref', 'refs/memgit');
  await page.getByRole('link', { name: 'Cancel' }).click();
  await page.waitForURL(`${server.url}/files/projects/q4-launch.md`);
  expect(git('rev-parse', 'HEAD')).toBe(head);
  expect(git('for-each-ref', 'refs/memgit')).toBe(audit);
  await context.close();
});
