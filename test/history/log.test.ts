/**
 * The read model's one log query (src/history/log-filter.ts, log.ts), in process: the filter parsed and
 * validated once (dates that do not exist refused, the text filter's default and its options), the text
 * filter's meaning (introduced or removed, case-insensitive, counted in the files in scope), and line
 * counts with one bound for the UI's list and `memgit log --stat`.
 */
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { commitStat, lineCountsOf } from '../../src/history/commit';
import { historyContext } from '../../src/history/context';
import { DIFF_MAX_EDIT_LENGTH } from '../../src/history/diffs';
import { queryLog } from '../../src/history/log';
import { InvalidFilterError, LogFilter, parseLogFilter } from '../../src/history/log-filter';
import type { MemoryStore } from '../../src/store/memory-store';
import { createApp } from '../../src/web/app';
import * as memgit from '../../src/index';
import { call, create, dispose, newStore, remove, replace } from '../rollback/helpers';
import { CLI_MAIN, ensureBuilt } from '../support/dist';

describe('parseLogFilter', () => {
  const cli = (input: Parameters<typeof parseLogFilter>[0]) => parseLogFilter(input, { paths: 'virtual' });
  const refusal = (run: () => unknown): InvalidFilterError => {
    try {
      run();
    } catch (error) {
      if (error instanceof InvalidFilterError) return error;
      throw error;
    }
    throw new Error('expected an InvalidFilterError');
  };

  it('reads times as the points in history do: UTC without a zone, a bare until to the end of its day, a minute to its end', () => {
    expect(cli({ since: '2026-12-02', until: '2026-12-02' })).toEqual({ since: Date.UTC(2026, 11, 2) / 1000, until: Date.UTC(2026, 11, 2, 23, 59, 59) / 1000 });
    expect(cli({ until: '2026-12-02T15:30' })).toEqual({ until: Date.UTC(2026, 11, 2, 15, 30, 59) / 1000 });
    expect(cli({ since: '2026-12-02T15:30:00+01:00' })).toEqual({ since: Date.UTC(2026, 11, 2, 14, 30) / 1000 });
    expect(cli({ since: '2028-02-29' })).toEqual({ since: Date.UTC(2028, 1, 29) / 1000 });
  });

  it.each(['2026-02-30', '2026-02-29', '2026-04-31T10:00', '2026-13-01', '2026-00-10', '2026-12-32T00:00Z'])('refuses %s: a date that does not exist', (value) => {
    const error = refusal(() => cli({ since: value }));
    expect(error.field).toBe('since');
    expect(error.message).toMatch(/^since must be a date that exists: /);
  });

  it('names the field as each surface spells it', () => {
    expect(refusal(() => parseLogFilter({ until: 'yesterday' }, { paths: 'virtual', names: { until: '--until' } })).message).toBe(
      '--until must be an ISO date or date-time such as 2026-12-02 or 2026-12-02T15:30 (no zone = UTC), not "yesterday"',
    );
  });

  it('the text filter: introduced or removed and any case by default; case and change qualify it, and only it', () => {
    expect(cli({ text: 'Alpha' })).toEqual({ text: 'Alpha' });
    expect(cli({ text: 'Alpha', case: 'insensitive', change: 'either' })).toEqual({ text: 'Alpha' });
    expect(cli({ text: 'Alpha', case: 'sensitive', change: 'introduced' })).toEqual({ text: 'Alpha', case: 'sensitive', change: 'introduced' });
    expect(cli({ case: 'sensitive', change: 'removed' })).toEqual({}); // a form sends them with an empty text box
    expect(refusal(() => cli({ text: 'Alpha', case: 'upper' })).field).toBe('case');
    expect(refusal(() => cli({ text: 'Alpha', change: 'moved' })).field).toBe('change');
    expect(refusal(() => cli({ text: '' })).field).toBe('text');
  });

  it('paths: the CLI takes /memories paths, the UI also paths relative to /memories', () => {
    expect(cli({ path: '/memories/notes' })).toEqual({ path: '/memories/notes' });
    expect(refusal(() => cli({ path: 'notes' })).field).toBe('path');
    expect(parseLogFilter({ path: 'notes/' }, { paths: 'relative' })).toEqual({ path: '/memories/notes' });
    expect(cli({ path: '/memories/a.md', follow: true })).toEqual({ path: '/memories/a.md', follow: true });
    expect(refusal(() => cli({ follow: true })).message).toBe('follow needs path naming a file');
    expect(refusal(() => parseLogFilter({ text: 'x'.repeat(201) }, { paths: 'relative', maxChars: 200 })).message).toBe('text is longer than 200 characters');
  });
});

describe('the log query', () => {
  let store: MemoryStore;
  beforeAll(async () => {
    store = await newStore();
    await call(store, 'toolu_l1', create('/memories/a.md', 'Alpha one\n'), 'sess_l');
    await call(store, 'toolu_l2', create('/memories/b.md', 'alpha two\n'), 'sess_l');
    await call(store, 'toolu_l3', replace('/memories/a.md', 'Alpha one', 'one'), 'sess_m');
    await call(store, 'toolu_l4', create('/memories/notes/c.md', 'ALPHA\n'), 'sess_m');
    await call(store, 'toolu_l5', remove('/memories/notes/c.md'), 'sess_m');
  });
  afterAll(async () => dispose(store));

  const ask = async (filter: LogFilter) => (await queryLog(historyContext(store), filter)).map((r) => [r.entry.toolUseId, r.pickaxe ?? null]);

  it('a text: the calls that introduced or removed it, in any case, each marked', async () => {
    expect(await ask({ text: 'Alpha' })).toEqual([
      ['toolu_l5', 'removed'],
      ['toolu_l4', 'introduced'],
      ['toolu_l3', 'removed'],
      ['toolu_l2', 'introduced'],
      ['toolu_l1', 'introduced'],
    ]);
    expect(await ask({ text: 'Alpha', case: 'sensitive' })).toEqual([
      ['toolu_l3', 'removed'],
      ['toolu_l1', 'introduced'],
    ]);
    expect(await ask({ text: 'alpha', change: 'introduced' })).toEqual([
      ['toolu_l4', 'introduced'],
      ['toolu_l2', 'introduced'],
      ['toolu_l1', 'introduced'],
    ]);
    expect(await ask({ text: 'alpha', change: 'removed', case: 'sensitive' })).toEqual([]);
  });

  it('a text below a path counts only the files there', async () => {
    expect(await ask({ text: 'alpha', path: '/memories/notes' })).toEqual([
      ['toolu_l5', 'removed'],
      ['toolu_l4', 'introduced'],
    ]);
  });

  it('the UI and the read API answer the same rows, marked the same way', async () => {
    const app = createApp({ store, log: () => undefined });
    const rows = (await request(app).get('/api/commits?text=Alpha').set('Host', '127.0.0.1')).body.rows as Array<{ toolUseId: string; pickaxe: string }>;
    expect(rows.map((r) => [r.toolUseId, r.pickaxe])).toEqual(await ask({ text: 'Alpha' }));
    const bad = await request(app).get('/api/commits?text=Alpha&case=upper').set('Host', '127.0.0.1');
    expect([bad.status, bad.body.error]).toEqual([400, 'case must be one of insensitive, sensitive']);
  });
});

describe('line counts: one bound for the UI and log --stat', () => {
  let store: MemoryStore;
  const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i}`).join('\n') + '\n';
  beforeAll(async () => {
    await ensureBuilt();
    store = await newStore();
    await call(store, 'toolu_s1', create('/memories/big.md', lines('old', 3000)));
    // Two unrelated versions: more than DIFF_MAX_EDIT_LENGTH lines change, beyond what is counted.
    await call(store, 'toolu_s2', create('/memories/big.md', lines('new', 3000)));
    await call(store, 'toolu_s3', replace('/memories/big.md', 'new 7\n', 'seven\n'));
  });
  afterAll(async () => dispose(store));

  it('the UI list, the read model and log --stat give the same counts, within the same bound', async () => {
    expect(3000 + 3000).toBeGreaterThan(DIFF_MAX_EDIT_LENGTH);
    const ctx = historyContext(store);
    const app = createApp({ store, log: () => undefined });
    const rows = (await request(app).get('/api/commits').set('Host', '127.0.0.1')).body.rows as Array<{ toolUseId: string; added: number; removed: number }>;
    const run = spawnSync(process.execPath, [CLI_MAIN, 'log', '--stat', '--json', '--repo', store.dir], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    const cliRows = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { toolUseId: string; stat: Array<{ added: number; removed: number; tooLarge: boolean }> });
    for (const [k, row] of rows.entries()) {
      const entry = store.history.byToolUseId(row.toolUseId ?? '') ?? store.history.at(0)!;
      expect(await lineCountsOf(ctx, entry)).toEqual({ added: row.added, removed: row.removed });
      const sum = cliRows[k].stat.reduce((s, f) => ({ added: s.added + f.added, removed: s.removed + f.removed }), { added: 0, removed: 0 });
      expect([row.toolUseId, sum]).toEqual([row.toolUseId, { added: row.added, removed: row.removed }]);
    }
    expect(rows.map((r) => [r.toolUseId, r.added, r.removed])).toEqual([
      ['toolu_s3', 1, 1],
      ['toolu_s2', 0, 0], // beyond the bound: not counted, on every surface
      ['toolu_s1', 3000, 0],
      [null, 0, 0],
    ]);
    expect((await commitStat(ctx, store.history.byToolUseId('toolu_s2')!))[0]).toMatchObject({ added: 0, removed: 0, tooLarge: true });
    expect((await commitStat(ctx, store.history.byToolUseId('toolu_s3')!))[0]).toMatchObject({ added: 1, removed: 1, tooLarge: false });
    // The text output says it, rather than a count of +0 -0 that would be false.
    const text = spawnSync(process.execPath, [CLI_MAIN, 'log', '--stat', '-n', '2', '--repo', store.dir], { encoding: 'utf8' }).stdout;
    expect(text).toContain(' /memories/big.md | +1 -1\n');
    expect(text).toContain(' /memories/big.md | too different to count (over 5000 changed lines)\n');
  });
});

describe('the package root exports the read model (docs/library.md#history)', () => {
  it('historyContext, parseLogFilter, queryLog and listSessions answer as the CLI does', async () => {
    const store = await newStore();
    try {
      await call(store, 'toolu_p1', create('/memories/a.md', 'refunds are pre-approved\n'), 'sess_pkg');
      const ctx = memgit.historyContext(store);
      expect(memgit.historyContext(store)).toBe(ctx); // one context per open store
      const filter = memgit.parseLogFilter({ text: 'PRE-APPROVED', since: '2026-01-01' }, { paths: 'virtual' });
      const rows = await memgit.queryLog(ctx, filter);
      expect(rows.map((row) => [memgit.commitRecord(row.entry).toolUseId, row.pickaxe])).toEqual([['toolu_p1', 'introduced']]);
      expect((await memgit.listSessions(ctx)).map((s) => [s.schema, s.id, s.calls])).toEqual([['memgit.session/1', 'sess_pkg', 1]]);
      expect(() => memgit.parseLogFilter({ since: '2026-02-30' }, { paths: 'virtual' })).toThrow(memgit.InvalidFilterError);
    } finally {
      await dispose(store);
    }
  });
});
