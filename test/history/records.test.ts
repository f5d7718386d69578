/**
 * One JSON shape: the CLI's --json and the HTTP API's JSON twins give the same records, every record has
 * exactly the fields docs/records.schema.json lists, and operator commits list the paths they touched.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/web/app';
import { commitRecord } from '../../src/history/records';
import { call, create, dispose, newStore, OPERATOR, rename, replace } from '../rollback/helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import type { MemoryStore } from '../../src/store/memory-store';

interface SchemaDef {
  required: string[];
  properties: Record<string, { const?: string }>;
}
const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs/records.schema.json'), 'utf8')) as { $defs: Record<string, SchemaDef> };

/** The record has every required field, no field the schema does not name, and the right marker. */
function expectConforms(record: Record<string, unknown>, def: string, extra: string[] = []): void {
  const { required, properties } = schema.$defs[def];
  expect(Object.keys(record).filter((k) => !extra.includes(k)).sort()).toEqual(expect.arrayContaining([...required].sort()));
  for (const key of Object.keys(record)) expect([def, key, key in properties]).toEqual([def, key, true]);
  expect(record.schema).toBe(properties.schema.const);
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('records', () => {
  let store: MemoryStore;
  beforeAll(async () => {
    await ensureBuilt();
    store = await newStore();
    await call(store, 'toolu_r1', create('/memories/a.md', 'one\ntwo\n'), 'sess_rec');
    await call(store, 'toolu_r2', replace('/memories/a.md', 'two', 'TWO'), 'sess_rec');
    await call(store, 'toolu_r3', rename('/memories/a.md', '/memories/b.md'), 'sess_rec');
    await store.revert('toolu_r2', { ...OPERATOR, reason: 'bad' });
  });
  afterAll(async () => dispose(store));

  it('an operator commit lists the paths it touched', async () => {
    const head = commitRecord(store.history.head!);
    expect(head).toMatchObject({ title: 'revert toolu_r2', toolUseId: null, path: null, paths: ['/memories/b.md'], actor: 'operator:alice', reason: 'bad' });
    expect(head.time).toMatch(ISO);
    expectConforms(head as unknown as Record<string, unknown>, 'commit');
  });

  it('memgit log --json, show --json and /api give the same commit records', async () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', store.dir], { encoding: 'utf8' });
    // log --json adds revertedBy to each record (the commits that undid it); the API rows do not.
    const log = cli('log', '--json').stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(log).toHaveLength(5);
    log.forEach((record) => expectConforms(record, 'commit'));

    const app = createApp({ store, log: () => undefined });
    const api = (url: string) => request(app).get(url).set('Host', '127.0.0.1').then((res) => res.body);
    const listed = (await api('/api/commits')).rows as Array<Record<string, unknown>>;
    const withoutPosition = listed.map(({ position: _position, added: _added, removed: _removed, ...rest }) => rest);
    expect(withoutPosition).toEqual(log.map(({ revertedBy: _revertedBy, ...rest }) => rest));
    listed.forEach((record) => expectConforms(record, 'commit'));

    const shown = JSON.parse(cli('show', 'toolu_r3', '--json').stdout);
    const { files, rewrittenFrom, ...shownRecord } = shown;
    expect(shownRecord).toEqual(log.find((r) => r.toolUseId === 'toolu_r3'));
    expect(rewrittenFrom).toBeNull(); // named by its current id (an id from before a redaction says which)
    expect(files).toEqual([{ status: 'renamed', oldPath: '/memories/a.md', newPath: '/memories/b.md', patch: expect.any(String) }]);
    const page = await api('/api/commits/toolu_r2');
    const { revertedBy: _r2RevertedBy, ...r2Record } = log.find((r) => r.toolUseId === 'toolu_r2');
    expect(page.commit).toMatchObject({ ...r2Record, position: 2 });
    expect(page.revertedBy.map((r: { title: string }) => r.title)).toEqual(['revert toolu_r2']);

    const sessions = (await api('/api/sessions')).sessions;
    expect(sessions).toEqual([
      { schema: 'memgit.session/1', id: 'sess_rec', calls: 3, first: expect.stringMatching(ISO), last: expect.stringMatching(ISO), files: 2, writes: 3, reverted: 1, reads: 0, failed: 0, logOnly: false },
    ]);
    expectConforms(sessions[0], 'session');

    const file = await api('/api/files/b.md');
    expect(file.history.map((r: { kind: string; path: string; from: string | null; toolUseId: string | null }) => [r.kind, r.path, r.from, r.toolUseId])).toEqual([
      ['modified', '/memories/b.md', null, null],
      ['renamed', '/memories/b.md', '/memories/a.md', 'toolu_r3'],
      ['modified', '/memories/a.md', null, 'toolu_r2'],
      ['created', '/memories/a.md', null, 'toolu_r1'],
    ]);
    file.history.forEach((record: Record<string, unknown>) => expectConforms(record, 'fileRevision'));
    expectConforms(file.current, 'fileRevision');
  });

  it('the HTML pages still show the times (records carry ISO strings)', async () => {
    const app = createApp({ store, log: () => undefined });
    const html = (await request(app).get('/sessions').set('Host', '127.0.0.1')).text;
    expect(html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">[^<]+<\/time>/);
  });
});
