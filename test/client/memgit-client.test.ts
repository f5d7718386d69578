/**
 * createMemgitClient against a real `memgit server` (spawned as users run it, every response checked
 * against docs/openapi.json by spawn-server.ts): tool calls become commits (checked with git), the read
 * API answers the typed models, refusals throw MemgitClientError with the server's status, type and code.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { createMemgitClient, MemgitClientError, MemgitError } from '../../src';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { checked } from '../support/openapi-contract';
import { makeKey, spawnServer, SpawnedServer } from '../server/spawn-server';

let dir: string;
let root: string;
let server: SpawnedServer;
let writer: string;
let reader: string;
let operator: string;

beforeAll(async () => {
  ensureBuilt();
  dir = makeTempDir('memgit-client-');
  root = path.join(dir, 'root');
  server = await spawnServer(root);
  writer = (await makeKey(root, 'acme-*', 'write')).key;
  reader = (await makeKey(root, 'acme-*', 'read')).key;
  operator = (await makeKey(root, 'acme-*', 'operator')).key;
});

afterAll(async () => {
  await server?.stop();
  removeDir(dir);
});

const git = (store: string, ...args: string[]) => spawnSync('git', ['-C', path.join(root, store), ...args], { encoding: 'utf8' }).stdout;

async function refusal(promise: Promise<unknown>): Promise<MemgitClientError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MemgitClientError);
  return error as MemgitClientError;
}

describe('createMemgitClient', () => {
  it('writes through tool calls (one commit per write, named by its tool_use id) and reads them back typed', async () => {
    const acme = createMemgitClient({ url: server.url, key: writer }).store('acme-1');
    const first = await acme.toolCall(toolUse('toolu_c1', { command: 'create', path: '/memories/notes/a b.md', file_text: 'tabs\n' }), 'sess_client');
    expect(first.tool_result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_c1', content: 'File created successfully at: /memories/notes/a b.md' });
    const second = await acme.toolCall(toolUse('toolu_c2', { command: 'str_replace', path: '/memories/notes/a b.md', old_str: 'tabs', new_str: 'spaces' }), 'sess_client');
    expect(git('acme-1', 'log', '--format=%s %H', '-2').trim().split('\n')).toEqual([`toolu_c2 ${second.commit}`, `toolu_c1 ${first.commit}`]);

    const read = createMemgitClient({ url: `${server.url}/`, key: reader });
    expect(await read.stores()).toEqual(['acme-1']);
    const store = read.store('acme-1');
    const log = await store.commits({ session: 'sess_client' });
    expect(log.rows.map((row) => [row.toolUseId, row.commit, row.added, row.removed])).toEqual([
      ['toolu_c2', second.commit, 1, 1],
      ['toolu_c1', first.commit, 1, 0],
    ]);
    const commit = await store.commit('toolu_c2');
    expect([commit.commit.commit, commit.commit.session, commit.diffs[0].newPath]).toEqual([second.commit, 'sess_client', '/memories/notes/a b.md']);
    expect((await store.commit(second.commit!.slice(0, 10))).commit.toolUseId).toBe('toolu_c2');
    expect((await store.call('toolu_c1')).commit.commit).toBe(first.commit);
    expect((await store.sessions()).map((s) => [s.id, s.calls])).toEqual([['sess_client', 2]]);
    expect((await store.session('sess_client')).page.map((call) => call.toolUseId)).toEqual(['toolu_c1', 'toolu_c2']);
    const file = await store.file('/memories/notes/a b.md');
    expect([file.path, file.lines.map((l) => l.text)]).toEqual(['/memories/notes/a b.md', ['spaces']]);
    expect((await store.file('notes/a b.md', { at: 'toolu_c1' })).lines.map((l) => l.text)).toEqual(['tabs']);
    expect((await store.tree({ dir: 'notes' })).rows.map((r) => [r.name, r.kind])).toEqual([['a b.md', 'file']]);
    expect((await store.search('spaces')).files.map((f) => f.rel)).toEqual(['notes/a b.md']);
    expect((await store.compare('toolu_c1', 'toolu_c2')).diffs.map((d) => d.status)).toEqual(['modified']);
    expect((await store.overview()).totals).toMatchObject({ files: 1, sessions: 1 });
    expect((await store.redactions()).redactions).toEqual([]);
    expect((await read.health()).status).toBe('ok');
    expect((await read.openapi()).openapi).toBe('3.1.0');
  });

  it('rolls back as the operator key: a conflict is an outcome (409), a preview, then a commit', async () => {
    const store = createMemgitClient({ url: server.url, key: operator }).store('acme-1');
    const head = git('acme-1', 'rev-parse', 'HEAD').trim();
    // toolu_c1 created the file toolu_c2 then changed: undoing the creation would lose that change.
    const conflict = await store.rollback('revert', { ref: 'toolu_c1', dryRun: true });
    expect([conflict.status, conflict.commit, conflict.conflicts?.length]).toEqual(['conflict', null, 1]);
    const preview = await store.rollback('revert', { ref: 'toolu_c2', dryRun: true });
    expect([preview.status, preview.commit, preview.head]).toEqual(['preview', null, head]);
    const done = await store.rollback('revert', { ref: 'toolu_c2', reason: 'client test', expectHead: head });
    expect(done.status).toBe('committed');
    expect(git('acme-1', 'rev-parse', 'HEAD').trim()).toBe(done.commit);
    expect(git('acme-1', 'show', 'HEAD:memories/notes/a b.md')).toBe('tabs\n');
  });

  it('refusals throw MemgitClientError with the status, the type and the stable code', async () => {
    const unknown = await refusal(createMemgitClient({ url: server.url, key: 'mgk_not_a_key' }).stores());
    expect([unknown.status, unknown.type, unknown.serverCode]).toEqual([401, 'authentication_error', 'unauthorized']);
    expect(unknown).toBeInstanceOf(MemgitError);
    expect(unknown.code).toBe('client_request_failed');

    const read = createMemgitClient({ url: server.url, key: reader });
    const hidden = await refusal(read.store('beta-1').commits());
    expect([hidden.status, hidden.type, hidden.serverCode, hidden.message]).toEqual([404, 'not_found_error', 'store_not_found', 'memgit server answered 404 to GET /api/v1/stores/beta-1/commits: no store "beta-1"']);
    const scope = await refusal(read.store('acme-1').toolCall(toolUse('toolu_r1', { command: 'view', path: '/memories' }), 'sess_r'));
    expect([scope.status, scope.serverCode]).toEqual([403, 'forbidden']);
    const filter = await refusal(read.store('acme-1').commits({ since: '2026-13-45' }));
    expect([filter.status, filter.type, filter.serverCode]).toEqual([400, null, 'invalid_filter']);
    expect(filter.message).toMatch(/^memgit server answered 400 to GET \/api\/v1\/stores\/acme-1\/commits: since /);
    const missing = await refusal(read.store('acme-1').file('nothing.md'));
    expect([missing.status, missing.serverCode, missing.type]).toEqual([404, 'not_found', null]);
    const rollback = await refusal(createMemgitClient({ url: server.url, key: operator }).store('acme-1').rollback('revert', { dryRun: true }));
    expect([rollback.status, rollback.serverCode, rollback.message]).toEqual([400, 'invalid_request', 'memgit server answered 400 to POST /api/v1/stores/acme-1/rollback/revert: ref is required']);
  });

  it('says when the server cannot be reached, after its retries', async () => {
    const gone = await refusal(createMemgitClient({ url: 'http://127.0.0.1:1', key: reader, retries: 1, maxRetryDelayMs: 10 }).stores());
    expect([gone.status, gone.type, gone.serverCode]).toEqual([null, null, null]);
    expect(gone.message).toMatch(/^memgit server at http:\/\/127\.0\.0\.1:1 could not be reached/);
    expect(() => createMemgitClient({ url: '', key: reader })).toThrow(/url must be a non-empty string/);
  });

  it("every answer it received was checked against the server's OpenAPI document", () => {
    const statuses = new Set(checked.map((c) => c.status));
    for (const status of [200, 201, 400, 401, 403, 404, 409]) expect([status, statuses.has(status)]).toEqual([status, true]);
    expect(checked.length).toBeGreaterThanOrEqual(25);
  });
});
