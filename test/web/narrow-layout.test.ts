/**
 * The UI at 1280, 800 and 420 px in real headless Chromium, on every page with a table (overview,
 * commits, sessions, a session, a file's history, the tree, search, redactions and a redaction record,
 * the rollback confirmation and the redaction preview): no page is wider than the window (a wide table
 * scrolls inside its own box), path cells keep a readable width and wrap only between folders, and rows
 * stay a few lines high. Below 900 px the tables used to collapse: at 800 px the commits list's rows were
 * 300–690 px tall with a 57 px path column; at 420 px the overview's file column was 51 px wide with a
 * line break every 3 characters.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { startServer, RunningServer } from '../../src/web/server';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { buildDemoStore } from '../../src/agent/demo/build';
import { INJECTED_SESSION, INJECTED_TOOL_USE_ID } from '../../src/agent/demo/transcript';
import { MemoryStore } from '../../src/store/memory-store';

/** Code passed to page.evaluate runs in the browser; the project compiles without the DOM lib. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type InPage = any;

const TOKEN = 'narrow-layout-operator-token-0420';
const PROFILE = '/memories/customers/acme-logistics/profile.md';
const LONG_NAME = `/memories/archive/${'quarterly-report-'.repeat(8)}final.md`;
/** A path cell narrower than this must fit its path on two lines. */
const MIN_PATH_CELL = 200;
/** No row's cells need more height than this (six lines or so; the collapsed rows were 300–690 px), free text aside. */
const MAX_ROW_HEIGHT = 160;

let dir: string;
let store: MemoryStore;
let server: RunningServer;
let browser: Browser;
let redactionId: string;

beforeAll(async () => {
  dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-narrow-')), 'store');
  await buildDemoStore(dir);
  store = await MemoryStore.open(dir, { log: () => undefined });
  // A redaction, so that the redaction list and a record (with its old → new map) have rows.
  const outcome = await store.redact({ text: 'jonas.berg@acme-logistics.example', reason: 'erasure request of a contact', operator: 'dana' });
  redactionId = outcome.id;
  // A name longer than any window: its table grows and scrolls in its box; the page stays the window's width.
  const long = await store.execute(
    { type: 'tool_use', id: 'toolu_long_name_01', name: 'memory', input: { command: 'create', path: LONG_NAME, file_text: 'long\n' } },
    { session: 'sess_20261201T080000_long' },
  );
  expect(long.is_error).toBeFalsy();
  server = await startServer({ store, port: 0, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  if (dir) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

const PAGES = () => [
  '/',
  '/commits',
  '/sessions',
  `/sessions/${INJECTED_SESSION}`,
  '/sessions/sess_20261126T143000_acme',
  `/files${PROFILE.replace('/memories', '')}`,
  `/files${LONG_NAME.replace('/memories', '')}`,
  '/tree?dir=customers/acme-logistics',
  '/search?q=acme',
  '/redactions',
  `/redactions/${redactionId}`,
  `/rollback/revert?ref=${INJECTED_TOOL_USE_ID}`,
  `/rollback/session?session=${INJECTED_SESSION}`,
];

interface Layout {
  scrollWidth: number;
  clientWidth: number;
  bareTables: number;
  boxes: number[];
  rows: { height: number; text: string }[];
  paths: { text: string; cell: number; lines: number; brokenSegments: number }[];
}

/** What the page looks like: its width, its tables' boxes, row heights and path cells. */
function measure(page: Page): Promise<Layout> {
  return page.evaluate(() => {
    const document = (globalThis as InPage).document;
    const root = document.scrollingElement;
    const linesOf = (el: InPage) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set([...range.getClientRects()].filter((r: InPage) => r.width > 0).map((r: InPage) => Math.round(r.top))).size;
    };
    const tables: InPage[] = [...document.querySelectorAll('main table.list')];
    return {
      scrollWidth: root.scrollWidth,
      clientWidth: root.clientWidth,
      bareTables: tables.filter((t) => !t.parentElement.classList.contains('table-box')).length,
      boxes: [...document.querySelectorAll('main .table-box')].map((b: InPage) => b.getBoundingClientRect().right),
      // A row's height as its cells' content needs it, free text (an error message, a reason) aside.
      rows: tables
        .flatMap((t) => [...t.querySelectorAll('tbody tr')])
        .map((r: InPage) => ({
          height: Math.max(
            0,
            ...[...r.cells]
              .filter((c: InPage) => !c.classList.contains('text'))
              .map((c: InPage) => {
                const range = document.createRange();
                range.selectNodeContents(c);
                return Math.round(range.getBoundingClientRect().height);
              }),
          ),
          text: r.innerText.slice(0, 80),
        })),
      paths: tables
        .flatMap((t) => [...t.querySelectorAll('td .path')])
        .map((p: InPage) => ({
          text: p.textContent,
          cell: Math.round(p.closest('td').getBoundingClientRect().width),
          lines: linesOf(p),
          brokenSegments: [...p.querySelectorAll('.seg')].filter((s: InPage) => linesOf(s) > 1).length,
        })),
    };
  });
}

async function loggedIn(width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${server.url}/login?next=/`);
  await page.getByLabel('Your name').fill('dana');
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${server.url}/`);
  return page;
}

it.each([1280, 800, 420])('at %i px: no page overflows, tables scroll in their box, paths keep a readable width, rows stay low', async (width) => {
  const page = await loggedIn(width);
  const problems: string[] = [];
  let tablesSeen = 0;
  const check = async (url: string) => {
    const layout = await measure(page);
    if (layout.scrollWidth > layout.clientWidth) problems.push(`${url}: the page is ${layout.scrollWidth} px wide in a ${layout.clientWidth} px window`);
    if (layout.bareTables) problems.push(`${url}: ${layout.bareTables} table(s) outside a scrolling box`);
    for (const right of layout.boxes) if (right > layout.clientWidth) problems.push(`${url}: a table box ends at ${right} px`);
    for (const row of layout.rows) if (row.height > MAX_ROW_HEIGHT) problems.push(`${url}: a row is ${row.height} px high: ${row.text}`);
    for (const p of layout.paths) {
      if (p.cell < MIN_PATH_CELL && p.lines > 2) problems.push(`${url}: ${p.text} takes ${p.lines} lines in a ${p.cell} px cell`);
      if (p.brokenSegments) problems.push(`${url}: ${p.text} breaks inside a name`);
    }
    tablesSeen += layout.boxes.length;
  };
  try {
    for (const url of PAGES()) {
      const response = await page.goto(server.url + url);
      expect([url, response?.status()]).toEqual([url, 200]);
      await check(url);
    }
    // The redaction preview (a POST from the form).
    await page.goto(`${server.url}/redact?path=${encodeURIComponent(PROFILE)}`);
    await page.getByLabel('Reason').fill('layout check');
    await page.getByRole('button', { name: 'Preview the redaction' }).click();
    await page.waitForURL('**/redact/preview');
    await expect(page.locator('h1').innerText()).resolves.toMatch(/^Preview: redaction/);
    await check('/redact/preview');
  } finally {
    await page.context().close();
  }
  expect(problems).toEqual([]);
  expect(tablesSeen).toBeGreaterThanOrEqual(10);
});
