/**
 * The audit UI under hostile load, against the real server (`memgit serve` as its own process, so its
 * memory can be read from /proc) and real Chromium: a 1 MiB file of half a million lines changed one line
 * per revision, a session of files of zero-width spaces, and a call whose tool_use id spells another
 * call's commit id. The budgets asserted here are the ones docs/reliability.md states.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { MemoryStore } from '../../src/store/memory-store';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { addBigFile, addZeroWidthFiles, BIG_LINES, BIG_SESSION, forgeCall, ZERO_WIDTH_SESSION } from './hostile-stores';

jest.setTimeout(300_000);

/** Peak resident memory of the server process after the heavy views (VmHWM). */
const MEMORY_BUDGET_BYTES = 512 * 1024 * 1024;
/** Bytes of any one response. */
const RESPONSE_BUDGET_BYTES = 4 * 1024 * 1024;
/**
 * A light request while heavy pages render: a liveness check, kept generous because the test machine is
 * shared (load average 15-25 on 2 cores while this was written, when the slowest `/` seen was 2.4 s; the
 * issue's target is 1 s on an idle machine, see docs/reliability.md).
 */
const LIGHT_REQUEST_MS = 5000;

const TOKEN = 'hostile-load-operator-token-5150';
const REVISIONS = 24;
const ZERO_WIDTH_FILES = 20;

let dir: string;
let victim: string;
let impostor: string;
let server: { child: ChildProcess; url: string; stdout: () => string };

function startServe(): Promise<typeof server> {
  const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', dir, '--port', '0'], { env: { ...process.env, MEMGIT_TOKEN: TOKEN }, cwd: REPO_ROOT });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (match && /reading needs/.test(out)) resolve({ child, url: match[1], stdout: () => out });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

function peakMemoryBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number; text: string; ms: number; headers: Headers }> {
  const started = performance.now();
  const res = await fetch(server.url + url, { headers, redirect: 'manual' });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes: body.length, text: body.toString('utf8'), ms: performance.now() - started, headers: res.headers };
}

function git(...args: string[]): string {
  return spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).stdout.trim();
}

beforeAll(async () => {
  await ensureBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-hostile-'));
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  await addBigFile(store, REVISIONS);
  await addZeroWidthFiles(store, ZERO_WIDTH_FILES);
  const report = await store.executeWithReport(
    { type: 'tool_use', id: 'toolu_victim', name: 'memory', input: { command: 'create', path: '/memories/victim.md', file_text: 'the real call\n' } },
    { session: 'sess_victim' },
  );
  victim = report.commit!;
  await store.close();
  await forgeCall(dir, victim, 'sess_old_memgit'); // as an older memgit, which took any id, would have written it
  impostor = git('rev-parse', 'HEAD');
  server = await startServe();
});

/** One Chromium for the file, launched by the first test that needs it; each test has a context of its own. */
let browser: Promise<Browser> | null = null;
function browserForFile(): Promise<Browser> {
  browser ??= launchChromium();
  return browser;
}

afterAll(async () => {
  if (browser) await (await browser).close();
  if (server && server.child.exitCode === null) {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('memory', () => {
  it(`repeated blame views of a ${BIG_LINES}-line file with ${REVISIONS} revisions stay under ${MEMORY_BUDGET_BYTES / 1024 / 1024} MiB`, async () => {
    const views = ['/files/big.md', '/files/big.md?at=toolu_big_001', '/files/big.md?at=toolu_big_003', '/files/big.md?at=toolu_big_005'];
    for (let round = 0; round < 4; round++) {
      for (const url of views) {
        const res = await get(url);
        expect([url, res.status]).toEqual([url, 200]);
        expect(res.bytes).toBeLessThan(RESPONSE_BUDGET_BYTES);
      }
    }
    // Early revisions are blamed (a few revisions of the file are within the work budget) ...
    const early = await get('/files/big.md?at=toolu_big_003');
    expect(early.text).toContain('class="code file blame"');
    expect(early.text).toContain('Only the first 5000 of 524287 lines are shown');
    // ... HEAD would replay every revision of half a million lines: plain content, and the page says why.
    const head = await get('/files/big.md');
    expect(head.text).toContain(`Blame is not shown for this version: it would replay ${REVISIONS} revisions of ${BIG_LINES} lines`);
    const peak = peakMemoryBytes(server.child.pid!);
    process.stdout.write(`hostile-load: server peak memory after 16 blame views: ${(peak / 1024 / 1024).toFixed(0)} MiB\n`);
    expect(peak).toBeLessThan(MEMORY_BUDGET_BYTES);
  });
});

describe('response budgets', () => {
  it(`every heavy page and JSON twin is under ${RESPONSE_BUDGET_BYTES / 1024 / 1024} MiB and says where it was cut`, async () => {
    const zwCommit = git('log', '--format=%H', '-1', '--grep=^toolu_zw_000$');
    const first = git('rev-list', '--max-parents=0', 'HEAD');
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const pages: [string, Record<string, string>?][] = [
      [`/sessions/${ZERO_WIDTH_SESSION}`],
      [`/api/sessions/${ZERO_WIDTH_SESSION}`],
      [`/sessions/${BIG_SESSION}`],
      ['/files/zw/f000.md'],
      [`/commits/${zwCommit}`],
      ['/search?q=a'],
      ['/api/search?q=a'],
      ['/search?q=%E2%80%8B'],
      [`/api/rollback/reset?to=commit:${first}`, bearer],
      [`/api/rollback/session?session=${ZERO_WIDTH_SESSION}`, bearer],
      // A three-way merge of the 524,287-line file (it ran for hours before merges left the shared lines out).
      ['/api/rollback/revert?ref=toolu_big_003', bearer],
    ];
    for (const [url, headers] of pages) {
      const res = await get(url, headers);
      process.stdout.write(`hostile-load: ${url} ${res.status} ${res.bytes} bytes ${res.ms.toFixed(0)} ms\n`);
      expect([url, res.status]).toEqual([url, 200]);
      expect([url, res.bytes < RESPONSE_BUDGET_BYTES]).toEqual([url, true]);
    }
    const file = await get('/files/zw/f000.md');
    // The one line is cut at 4,000 characters, and those are one counted mark, not 4,000 spans.
    expect(file.text).toContain('U+200B \u00d74000');
    expect(file.text).toContain('Long lines are cut at 4000 characters');
    const session = await get(`/sessions/${ZERO_WIDTH_SESSION}`);
    expect(session.text.match(/U\+200B \u00d7/g)!.length).toBeGreaterThanOrEqual(ZERO_WIDTH_FILES);
    const search = await get('/search?q=a');
    expect(search.text).toContain('More lines of this file match'); // big.md: 20 lines shown, not 524,286
    const reset = JSON.parse((await get(`/api/rollback/reset?to=commit:${first}`, bearer)).text) as { truncated: boolean; patch: string };
    expect(reset.truncated).toBe(true);
    expect(reset.patch).toMatch(/memgit: patch (cut here|of \S+ left out)/);
    // toolu_big_004 and later changed the same line again: a conflict naming them, found by merging a few
    // lines — or, on a slow machine, the preview's time budget reached while it read their versions.
    const revert = JSON.parse((await get('/api/rollback/revert?ref=toolu_big_003', bearer)).text) as { status: string; conflicts: { kind: string; calls: unknown[] }[] };
    expect(['conflict', 'stopped']).toContain(revert.status);
    if (revert.status === 'conflict') expect(revert.conflicts.map((c) => [c.kind, c.calls.length])).toEqual([['lines', REVISIONS - 4]]);
  });
});

describe('the event loop stays free', () => {
  it(`answers / within ${LIGHT_REQUEST_MS} ms while heavy pages render`, async () => {
    const heavy = [
      get(`/sessions/${ZERO_WIDTH_SESSION}?view=split`),
      get('/files/big.md?at=toolu_big_006'),
      get('/search?q=m'),
      get(`/sessions/${BIG_SESSION}`),
    ];
    let heavyDone = false;
    const allHeavy = Promise.all(heavy).then((r) => {
      heavyDone = true;
      return r;
    });
    const light: number[] = [];
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Every light request sent while heavy pages are still rendering counts, however late it returns.
    while (!heavyDone && light.length < 20) {
      const res = await get('/');
      expect(res.status).toBe(200);
      light.push(res.ms);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const res of await allHeavy) expect(res.status).toBe(200);
    process.stdout.write(`hostile-load: light requests during heavy pages: ${light.map((ms) => ms.toFixed(0)).join(', ')} ms\n`);
    expect(light.length).toBeGreaterThan(0);
    expect(Math.max(...light)).toBeLessThan(LIGHT_REQUEST_MS);
  });
});

describe('an id that spells a commit id', () => {
  it('links name their kind: /commits/<sha> is the commit, /calls/<id> the call; an ambiguous ref is refused with the candidates', async () => {
    const commit = await get(`/api/commits/${victim}`);
    expect(JSON.parse(commit.text).commit).toMatchObject({ commit: victim, toolUseId: 'toolu_victim' });
    const call = await get(`/api/calls/${victim}`);
    expect(JSON.parse(call.text).commit).toMatchObject({ commit: impostor, toolUseId: victim });
    const ambiguous = await get(`/files/victim.md?at=${victim}`);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.text).toContain('is ambiguous');
    expect(ambiguous.text).toContain(`commit ${victim}`);
    expect(ambiguous.text).toContain(`call ${victim}`);
  });

  it("the CLI's show, revert and reset --to refuse the ambiguous ref and act on commit:<sha>", () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', dir], { encoding: 'utf8' });
    const headBefore = git('rev-parse', 'HEAD');
    for (const args of [['show', victim], ['revert', victim, '--dry-run'], ['reset', '--to', victim, '--dry-run']]) {
      const result = cli(...args);
      expect([args.join(' '), result.status]).toEqual([args.join(' '), 1]);
      expect(result.stderr).toContain('is ambiguous');
    }
    const shown = cli('show', `commit:${victim}`);
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain('toolu_victim');
    expect(git('rev-parse', 'HEAD')).toBe(headBefore);
  });

  it('in Chromium, "Revert this call" on the real commit previews reverting the real call, not the impostor', async () => {
    const context = await (await browserForFile()).newContext(); // a fresh profile: no cookies from another test
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${server.url}/commits/${victim}`);
      await page.getByRole('link', { name: 'Revert this call…' }).click();
      await page.waitForURL(/\/login\?next=/);
      await page.getByLabel('Your name').fill('sam');
      await page.getByLabel('Operator token').fill(TOKEN);
      await page.getByRole('button', { name: /log in/i }).click();
      await page.waitForURL(/\/rollback\/revert\?ref=commit%3A/);
      await expect(page.locator('h1').textContent()).resolves.toBe('revert toolu_victim');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('in Chromium, the zero-width session and the big file render with their budget notices', async () => {
    const context = await (await browserForFile()).newContext(); // a fresh profile: no cookies from another test
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      const session = await page.goto(`${server.url}/sessions/${ZERO_WIDTH_SESSION}`);
      expect(session?.status()).toBe(200);
      await expect(page.locator('span.ctl', { hasText: 'U+200B ×4000' }).first().isVisible()).resolves.toBe(true);
      const big = await page.goto(`${server.url}/files/big.md`);
      expect(big?.status()).toBe(200);
      await expect(page.locator('p.budget').first().textContent()).resolves.toContain('Blame is not shown');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('small findings on the real server', () => {
  it('malformed percent-encoding is a 400; no HSTS over plain HTTP; the login page is not cached', async () => {
    expect((await get('/files/%')).status).toBe(400);
    expect((await get('/')).headers.get('strict-transport-security')).toBeNull();
    expect((await get('/login')).headers.get('cache-control')).toBe('no-store');
  });
});
