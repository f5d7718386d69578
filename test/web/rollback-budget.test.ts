/**
 * Rollback previews under hostile load, with the real server and real Chromium: a session of more calls
 * than a preview may plan (its calls interleaved with another session's on the same file, so that each
 * undo is a three-way merge), and a reset across the whole history of some 3,500 commits, which deletes
 * 600 files. The previews answer within their budgets (src/operator/rollback.ts, ROLLBACK_BUDGETS),
 * say what they left out or where they stopped, write nothing, and a light request is answered while
 * they render. The store is written with git fast-import (hostile-stores.ts), as memgit writes it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, BrowserContext } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import type { MemoryStore } from '../../src/store/memory-store';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { RunningServer, startServer } from '../../src/web/server';
import { MAX_REVERTS_LISTED, ROLLBACK_BUDGETS } from '../../src/operator/rollback';
import { fastImportStore, LONG_SESSION, longSessionCalls, manyFileCalls } from './hostile-stores';

jest.setTimeout(300_000);

const TOKEN = 'rollback-budget-operator-token-c0ffee42';
/** Bytes of any one response (as in hostile-load.test.ts and docs/reliability.md). */
const RESPONSE_BUDGET_BYTES = 4 * 1024 * 1024;
/** The liveness bound of hostile-load.test.ts (generous: the test machine is shared). */
const LIGHT_REQUEST_MS = 5000;
const LONG_CALLS = ROLLBACK_BUDGETS.calls + 20;
const FILES = 600;

let work: string;
let dir: string;
let store: MemoryStore;
let server: RunningServer;
let browser: Browser;
let operator: BrowserContext;

const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trimEnd();
const bearer = { authorization: `Bearer ${TOKEN}` };

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number; text: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(server.url + url, { headers, redirect: 'manual' });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes: body.length, text: body.toString('utf8'), ms: performance.now() - started };
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-rollback-budget-'));
  dir = path.join(work, 'store');
  function* calls() {
    yield* longSessionCalls(LONG_CALLS, 200);
    yield* manyFileCalls(1500, FILES, 3000);
  }
  store = await fastImportStore(dir, calls());
  await store.history.backfillFacts(); // as a store memgit wrote itself (no background work during the test)
  server = await startServer({ store, port: 0, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  browser = await launchChromium();
  operator = await browser.newContext();
  const page = await operator.newPage();
  await page.goto(`${server.url}/login`);
  await page.getByLabel('Your name').fill('sam');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${server.url}/`);
  await page.close();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe(`a session of ${LONG_CALLS} calls (a preview plans at most ${ROLLBACK_BUDGETS.calls})`, () => {
  it('the JSON preview says it stopped, and why, and writes nothing', async () => {
    const head = git('rev-parse', 'HEAD');
    const res = await get(`/api/rollback/session?session=${LONG_SESSION}`, bearer);
    expect(res.status).toBe(200);
    const outcome = JSON.parse(res.text) as Record<string, unknown>;
    expect(outcome).toMatchObject({ status: 'stopped', stopped: { reason: 'calls', planned: 0, of: LONG_CALLS }, files: [], commit: null });
    expect(git('rev-parse', 'HEAD')).toBe(head);
  });

  it('in Chromium, the confirmation page says it stopped, names the CLI command, and offers no confirm button', async () => {
    const page = await operator.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const response = await page.goto(`${server.url}/rollback/session?session=${LONG_SESSION}`);
    expect(response?.status()).toBe(200);
    await expect(page.locator('#stopped-h').innerText()).resolves.toBe('This preview stopped: nothing was written');
    await expect(page.locator('p.budget').first().innerText()).resolves.toContain(`It would undo ${LONG_CALLS} calls, and a preview here plans at most ${ROLLBACK_BUDGETS.calls}`);
    await expect(page.locator('pre.cli').innerText()).resolves.toBe(`memgit rollback-session ${LONG_SESSION} --dry-run`);
    await expect(page.locator('form.op-form').count()).resolves.toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('a reset across the whole history', () => {
  const to = 'toolu_long_init';

  it(`the JSON preview stays under ${RESPONSE_BUDGET_BYTES / 1024 / 1024} MiB: patches and undone commits cut, and it says so`, async () => {
    const res = await get(`/api/rollback/reset?to=${to}`, bearer);
    expect(res.status).toBe(200);
    expect(res.bytes).toBeLessThan(RESPONSE_BUDGET_BYTES);
    const outcome = JSON.parse(res.text) as { status: string; truncated: boolean; patchCut: boolean; reverts: string[]; revertsLeftOut: number; files: { cut?: boolean; patch: string }[] };
    expect(outcome.status).toBe('preview');
    expect(outcome.truncated).toBe(true);
    expect(outcome.patchCut).toBe(true);
    expect(outcome.files).toHaveLength(FILES + 1); // every file is listed, whether or not its patch is
    const cut = outcome.files.filter((f) => f.cut);
    expect(cut.length).toBeGreaterThan(0);
    expect(cut.every((f) => f.patch.includes('left out'))).toBe(true);
    expect(outcome.reverts).toHaveLength(MAX_REVERTS_LISTED);
    expect(outcome.reverts.length + outcome.revertsLeftOut).toBe(Number(git('rev-list', '--count', 'HEAD')) - 2);
  });

  it('in Chromium, the confirmation page stays under the response budget, marks what it left out, and can still be confirmed', async () => {
    const page = await operator.newPage();
    const response = await page.goto(`${server.url}/rollback/reset?to=${to}`);
    expect(response?.status()).toBe(200);
    expect((await response!.body()).length).toBeLessThan(RESPONSE_BUDGET_BYTES);
    await expect(page.locator('p.budget', { hasText: 'Left out: this preview reached its size or time budget' }).count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('p.note.budget', { hasText: 'Some files of this change are left out above' }).count()).resolves.toBe(1);
    await expect(page.locator('form.op-form button.danger').count()).resolves.toBe(1);
    await page.close();
  });
});

describe('the event loop stays free while rollback previews plan and render', () => {
  it(`answers / within ${LIGHT_REQUEST_MS} ms meanwhile`, async () => {
    const page = await operator.newPage();
    let heavyDone = false;
    const heavy = Promise.all([
      get('/api/rollback/reset?to=toolu_long_init', bearer),
      get('/api/rollback/revert?ref=toolu_long_5', bearer), // a merge against 2,000 later calls, and their conflicts
      get('/api/rollback/session?session=sess_many_3', bearer),
      page.goto(`${server.url}/rollback/reset?to=toolu_long_init`),
    ]).then((r) => {
      heavyDone = true;
      return r;
    });
    const light: number[] = [];
    await new Promise((resolve) => setTimeout(resolve, 50));
    while (!heavyDone && light.length < 20) {
      const res = await get('/');
      expect(res.status).toBe(200);
      light.push(res.ms);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [reset, revert, session, html] = await heavy;
    for (const res of [reset, revert, session]) expect(res.status).toBe(200);
    expect(html?.status()).toBe(200);
    // The revert either finished (a conflict, listing the later calls) or stopped at its time budget.
    expect(['conflict', 'stopped']).toContain((JSON.parse(revert.text) as { status: string }).status);
    process.stdout.write(`rollback-budget: light requests during rollback previews: ${light.map((ms) => ms.toFixed(0)).join(', ')} ms\n`);
    expect(light.length).toBeGreaterThan(0);
    expect(Math.max(...light)).toBeLessThan(LIGHT_REQUEST_MS);
    await page.close();
  });
});
