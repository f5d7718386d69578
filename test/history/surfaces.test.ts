/**
 * One read model, three surfaces (issue 26): the UI's JSON twins (`memgit serve`'s app), the server's
 * read API (`memgit server`, GET /api/v1/stores/{id}/...) and the CLI's --json give the same answers to
 * the same questions — the log with its filters, sessions, blame, one commit, a comparison of two points
 * — on the demo store, record for record. And the disagreements the issue found are settled the same way
 * on all three: an impossible date is refused, the text filter means one thing by default (introduced or
 * removed, case-insensitive) with the other meanings as options, line counts have one bound, and
 * `memgit sessions --json` prints the documented session records.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { buildDemoStore } from '../../src/agent/demo/build';
import { INJECTED_TOOL_USE_ID } from '../../src/agent/demo/transcript';
import { MemoryStore } from '../../src/store/memory-store';
import { createApp } from '../../src/web/app';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CliRun, memgitInProcess } from '../support/cli-in-process';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeKey, spawnServer, SpawnedServer } from '../server/spawn-server';

jest.setTimeout(300_000); // a busy 2-core machine starts the server and the UI slowly

interface SchemaDef {
  required: string[];
  properties: Record<string, { const?: string }>;
}
const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs/records.schema.json'), 'utf8')) as { $defs: Record<string, SchemaDef> };

type Json = Record<string, unknown>;

const base = makeTempDir('memgit-surfaces-');
const root = path.join(base, 'root');
const dir = path.join(root, 'demo');
let store: MemoryStore;
let app: Express;
let server: SpawnedServer;
let key: string;

beforeAll(async () => {
  await ensureBuilt();
  fs.mkdirSync(root);
  await buildDemoStore(dir);
  store = await MemoryStore.open(dir, { create: false, log: () => undefined });
  app = createApp({ store, log: () => undefined });
  key = (await makeKey(root, 'demo', 'read')).key;
  server = await spawnServer(root);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await store?.close();
  removeDir(base);
});

/** The UI's JSON twin of a page (the same loader as the HTML page). */
async function ui(url: string): Promise<{ status: number; body: Json }> {
  const res = await request(app).get(url).set('Host', '127.0.0.1');
  return { status: res.status, body: res.body as Json };
}

/** The server's read API for the demo store, with a read key. */
async function api(url: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}/api/v1/stores/demo${url}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as Json };
}

/** The built CLI as a process, as users run it. */
function cliProcess(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', dir], { encoding: 'utf8', env: { ...process.env, MEMGIT_REPO: '' } });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The same program run in this process (test/support/cli-in-process.ts): the questions below are many. */
function cli(args: string[]): Promise<CliRun> {
  return memgitInProcess([...args, '--repo', dir]);
}

const jsonLines = (text: string): Json[] => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Json);

/** The commit record of a row, whatever each surface adds beside it. */
function commitRecordOf(row: Json): Json {
  const { position: _p, added: _a, removed: _r, pickaxe: _x, revertedBy: _b, stat: _s, patches: _q, ...record } = row;
  return record;
}

function expectConforms(record: Json, def: string): void {
  const { required, properties } = schema.$defs[def];
  expect(Object.keys(record)).toEqual(expect.arrayContaining(required));
  for (const field of Object.keys(record)) expect([def, field, field in properties]).toEqual([def, field, true]);
  expect(record.schema).toBe(properties.schema.const);
}

/** A log question asked of all three: the CLI's options and the query parameters of /commits. */
const LOG_QUESTIONS: Array<{ name: string; args: string[]; query: string }> = [
  { name: 'everything', args: [], query: '' },
  { name: 'one session', args: ['--session', 'sess_20261126T143000_acme'], query: 'session=sess_20261126T143000_acme' },
  { name: 'a path prefix', args: ['--path', '/memories/customers/acme-logistics'], query: 'path=/memories/customers/acme-logistics' },
  { name: 'a file followed through its rename', args: ['--path', '/memories/playbooks/webhook-signature-express5.md', '--follow'], query: 'path=/memories/playbooks/webhook-signature-express5.md&follow=1' },
  { name: 'one command', args: ['--command', 'create'], query: 'command=create' },
  { name: 'a time range', args: ['--since', '2026-11-26', '--until', '2026-11-26T15:02'], query: 'since=2026-11-26&until=2026-11-26T15:02' },
  { name: 'a text, by default', args: ['-S', 'BATCH'], query: 'text=BATCH' },
  { name: 'a text, introduced only', args: ['-S', 'batch', '--change', 'introduced'], query: 'text=batch&change=introduced' },
  { name: 'a text, removed only', args: ['-S', 'Batch', '--change', 'removed'], query: 'text=Batch&change=removed' },
  { name: 'a text, exact case', args: ['-S', 'Express', '--case', 'sensitive'], query: 'text=Express&case=sensitive' },
  { name: 'a text below a path', args: ['-S', 'batch', '--path', '/memories/customers/acme-logistics/setup.md'], query: 'text=batch&path=/memories/customers/acme-logistics/setup.md' },
];

describe('the same answers on the UI, the read API and the CLI', () => {
  it('the CLI as users run it (a process) answers as the runs in this process below do', async () => {
    for (const args of [['log', '--json', '--stat'], ['sessions', '--json'], ['show', 'HEAD~1', '--json']]) {
      const inProcess = await cli(args);
      expect({ args, ...cliProcess(args) }).toEqual({ args, ...inProcess });
    }
  });

  it.each(LOG_QUESTIONS)('log: $name', async ({ args, query }) => {
    const fromCli = await cli(['log', '--json', '--stat', ...args]);
    expect(fromCli.status).toBe(0);
    const cliRows = jsonLines(fromCli.stdout);
    const uiPage = await ui(`/api/commits${query ? `?${query}` : ''}`);
    const apiPage = await api(`/commits${query ? `?${query}` : ''}`);
    expect([uiPage.status, apiPage.status]).toEqual([200, 200]);
    expect(apiPage.body).toEqual(uiPage.body);
    const uiRows = uiPage.body.rows as Json[];
    expect(uiRows.length).toBeGreaterThan(0);
    // The same commit records, in the same order; each a documented memgit.commit/1 record.
    expect(uiRows.map(commitRecordOf)).toEqual(cliRows.map(commitRecordOf));
    for (const row of cliRows) expectConforms(commitRecordOf(row), 'commit');
    // The same direction of a text change, and the same line counts (the index's, with one bound).
    expect(uiRows.map((r) => r.pickaxe ?? null)).toEqual(cliRows.map((r) => r.pickaxe ?? null));
    const sums = cliRows.map((r) => (r.stat as Array<{ added: number; removed: number }>).reduce((s, f) => ({ added: s.added + f.added, removed: s.removed + f.removed }), { added: 0, removed: 0 }));
    expect(uiRows.map((r) => ({ added: r.added, removed: r.removed }))).toEqual(sums);
  });

  it('the text filter means the same on all three: introduced or removed, any case, each row says which', async () => {
    const rows = jsonLines((await cli(['log', '--json', '-S', 'BATCH'])).stdout);
    expect(rows.map((r) => [r.command, r.pickaxe])).toEqual([
      ['insert', 'introduced'],
      ['delete', 'removed'],
      ['create', 'introduced'],
    ]);
    expect(jsonLines((await cli(['log', '--json', '-S', 'BATCH', '--case', 'sensitive'])).stdout)).toEqual([]);
    expect(((await ui('/api/commits?text=BATCH&case=sensitive')).body.rows as Json[])).toEqual([]);
    expect(((await api('/commits?text=BATCH&case=sensitive')).body.rows as Json[])).toEqual([]);
    // The search page's history is the same question.
    const search = (await ui('/api/search?q=BATCH')).body.history as { rows: Json[] };
    expect(search.rows.map((r) => [r.command, r.pickaxe])).toEqual(rows.map((r) => [r.command, r.pickaxe]));
  });

  it('sessions: the documented session records', async () => {
    const fromCli = await cli(['sessions', '--json']);
    expect(fromCli.status).toBe(0);
    const records = jsonLines(fromCli.stdout);
    // The three conversations, and the demo dream's reads (its writes are on its branch: a log-only session).
    expect(records).toHaveLength(4);
    expect(records.filter((r) => r.logOnly).map((r) => String(r.id).replace(/drm_[0-9a-f]{24}/, 'drm_…'))).toEqual(['dream-drm_…']);
    for (const record of records) expectConforms(record, 'session');
    expect((await ui('/api/sessions')).body.sessions).toEqual(records);
    expect((await api('/sessions')).body.sessions).toEqual(records);
  });

  it.each([
    ['at HEAD', '/memories/customers/acme-logistics/profile.md', null],
    ['at an earlier point', '/memories/customers/acme-logistics/profile.md', INJECTED_TOOL_USE_ID],
    ['through a rename', '/memories/playbooks/webhook-signature-express5.md', null],
  ])('blame %s', async (_name, file, at) => {
    const fromCli = await cli(['blame', file, '--json', ...(at ? ['--at', at] : [])]);
    expect(fromCli.status).toBe(0);
    const blamed = JSON.parse(fromCli.stdout) as { at: string; lines: Array<{ text: string; commit: string; toolUseId: string | null; session: string | null }> };
    const rel = file.slice('/memories/'.length);
    const query = at ? `?at=${at}` : '';
    const page = (await ui(`/api/files/${rel}${query}`)).body as { at: { commit: string }; lines: Array<{ text: string; origin: string }>; origins: Record<string, Json> };
    expect((await api(`/files/${rel}${query}`)).body).toEqual(page);
    expect(page.at.commit).toBe(blamed.at);
    expect(page.lines.map((l) => [l.text, l.origin])).toEqual(blamed.lines.map((l) => [l.text, l.commit]));
    for (const line of blamed.lines) expect([page.origins[line.commit].toolUseId, page.origins[line.commit].session]).toEqual([line.toolUseId, line.session]);
  });

  it.each([INJECTED_TOOL_USE_ID, 'HEAD~1', 'toolu_01pYJzvItJ17FO6bBlKu8y0X'])('show %s: the same commit, files and reverts', async (ref) => {
    const fromCli = await cli(['show', ref, '--json']);
    expect(fromCli.status).toBe(0);
    const shown = JSON.parse(fromCli.stdout) as Json & { files: Array<{ status: string; oldPath: string | null; newPath: string | null }>; revertedBy: string[] };
    const { files, rewrittenFrom, revertedBy, ...record } = shown;
    const page = (await ui(`/api/commits/${ref.startsWith('toolu_') ? ref : shown.commit}`)).body as Json & { commit: Json; diffs: Json[]; revertedBy: Json[]; rewrittenFrom: unknown };
    expect((await api(`/commits/${ref.startsWith('toolu_') ? ref : shown.commit}`)).body).toEqual(page);
    expect(commitRecordOf(page.commit)).toEqual(record);
    expectConforms(record, 'commit');
    expect(page.revertedBy.map((r) => r.commit)).toEqual(revertedBy);
    expect(page.rewrittenFrom).toEqual(rewrittenFrom);
    expect(page.diffs.map((d) => [d.status, d.oldPath, d.newPath])).toEqual(files.map((f) => [f.status, f.oldPath, f.newPath]));
  });

  it.each([
    ['two calls', 'toolu_019bemzYumle29nmwYfq483X', INJECTED_TOOL_USE_ID, null],
    ['two days, below a path', '2026-11-26', '2026-11-30', '/memories/customers'],
    ['later against earlier (renames followed back)', 'HEAD', 'toolu_01UxdJDJmATl4GjUQg1AoeaS', null],
  ])('compare %s', async (_name, from, to, limit) => {
    const fromCli = await cli(['diff', from, to, ...(limit ? [limit] : []), '--json']);
    expect(fromCli.status).toBe(0);
    const compared = JSON.parse(fromCli.stdout) as { from: string; to: string; path: string; files: Json[] };
    const query = `?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}${limit ? `&path=${encodeURIComponent(limit)}` : ''}`;
    const page = (await ui(`/api/compare${query}`)).body as { from: Json; to: Json; path: string; diffs: Json[] };
    expect((await api(`/compare${query}`)).body).toEqual(page);
    expect([page.from.commit, page.to.commit, page.path]).toEqual([compared.from, compared.to, compared.path]);
    expect(compared.files.length).toBeGreaterThan(0);
    const pick = (f: Json) => [f.status, f.oldPath, f.newPath, f.added, f.removed];
    expect(page.diffs.map(pick)).toEqual(compared.files.map(pick));
  });
});

describe('an impossible date is refused everywhere, never rolled over into the next month', () => {
  it.each([
    ['since', '2026-02-30'],
    ['until', '2026-02-30'],
    ['since', '2026-04-31T10:00'],
    ['until', '2026-13-01'],
  ])('?%s=%s: 400 with a clear message on the UI and the API; exit 64 from the CLI', async (field, value) => {
    for (const answer of [await ui(`/api/commits?${field}=${value}`), await api(`/commits?${field}=${value}`)]) {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(new RegExp(`^${field} must be a date that exists: "${value}" is not one, `));
    }
    const html = await request(app).get(`/commits?${field}=${value}`).set('Host', '127.0.0.1');
    expect(html.status).toBe(400);
    expect(html.text).toContain(`${field} must be a date that exists`);
    const run = await cli(['log', `--${field}`, value]);
    expect(run.status).toBe(64);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(new RegExp(`^memgit: --${field} must be a date that exists: "${value}" is not one, `));
  });

  it('says what is wrong with the date', async () => {
    expect((await ui('/api/commits?since=2026-02-30')).body.error).toBe('since must be a date that exists: "2026-02-30" is not one, 2026-02 has no day 30 (it has 28 days)');
    expect((await ui('/api/commits?since=yesterday')).body.error).toBe('since must be an ISO date or date-time such as 2026-12-02 or 2026-12-02T15:30 (no zone = UTC), not "yesterday"');
  });

  it('a point in history at an impossible date is refused too, with or without a time of day', async () => {
    for (const point of ['2026-02-30', '2026-02-30T10:00', '2026-02-29T00:00Z']) {
      expect([point, (await ui(`/api/tree?at=${point}`)).status]).toEqual([point, 400]);
      expect([point, (await api(`/tree?at=${point}`)).status]).toEqual([point, 400]);
      const run = await cli(['show', point]);
      expect([point, run.status, run.stderr]).toEqual([point, 64, `memgit: ${JSON.stringify(point)} is not a valid time\n`]);
    }
    // A date that exists still names the memory as it was then.
    expect((await cli(['show', '2028-02-29T00:00Z', '--json'])).status).toBe(0);
  });
});
