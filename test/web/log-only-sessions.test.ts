/**
 * Sessions that made no commit — they only read, or every call failed — are known from the call log
 * alone: the sessions list (HTML and JSON) includes them, marked, and their page shows their reads and
 * failures in order instead of answering 404. The history (checked with the git CLI) has no trace of them.
 */
import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { MemoryStore } from '../../src/store/memory-store';
import { createApp } from '../../src/web/app';
import { QUIET, toolUse, useTempDir } from '../store/git-helpers';

const tempDir = useTempDir();
const WRITER = 'sess_20261204T090000_wrt1';
const READER = 'sess_20261204T100000_read';
const FAILER = 'sess_20261204T110000_fail';

test('read-only and failed-only sessions are listed, marked, and have a page with their calls in order', async () => {
  const store = await MemoryStore.open(tempDir(), { ...QUIET, fsync: false });
  try {
    const run = (id: string, input: Record<string, unknown>, session: string) => store.execute(toolUse(id, input), { session });
    expect((await run('toolu_w1', { command: 'create', path: '/memories/notes.md', file_text: 'alpha\n' }, WRITER)).is_error).toBeUndefined();
    expect((await run('toolu_w2', { command: 'view', path: '/memories/notes.md' }, WRITER)).is_error).toBeUndefined();
    expect((await run('toolu_r1', { command: 'view', path: '/memories' }, READER)).is_error).toBeUndefined();
    expect((await run('toolu_r2', { command: 'view', path: '/memories/notes.md' }, READER)).is_error).toBeUndefined();
    expect((await run('toolu_r3', { command: 'view', path: '/memories/missing.md' }, READER)).is_error).toBe(true);
    expect((await run('toolu_f1', { command: 'str_replace', path: '/memories/notes.md', old_str: 'nope', new_str: 'x' }, FAILER)).is_error).toBe(true);
    expect((await run('toolu_f2', { command: 'create', path: 'relative.md', file_text: 'x' }, FAILER)).is_error).toBe(true);
    // A call with a session id the store refuses names no session.
    expect((await run('toolu_bad', { command: 'view', path: '/memories' }, '0123abcd')).is_error).toBe(true);

    // The history knows only the writer (the git CLI agrees); the call log knows the others.
    const gitLog = execFileSync('git', ['-C', store.dir, 'log', '--format=%s|%(trailers:key=Memory-Session,valueonly,separator=)'], { encoding: 'utf8' });
    expect(gitLog.trim().split('\n')).toEqual([`toolu_w1|${WRITER}`, 'memgit: initialise store|']);

    const app = createApp({ store, log: () => undefined });
    const get = (url: string) => request(app).get(url).set('Host', '127.0.0.1:3000');

    const list = (await get('/api/sessions')).body.sessions;
    const byId = Object.fromEntries(list.map((s: { id: string }) => [s.id, s]));
    expect(Object.keys(byId).sort()).toEqual([WRITER, READER, FAILER].sort());
    expect(byId[WRITER]).toMatchObject({ calls: 1, writes: 1, reads: 1, failed: 0, logOnly: false });
    expect(byId[READER]).toMatchObject({ schema: 'memgit.session/1', calls: 0, writes: 0, reverted: 0, files: 0, reads: 2, failed: 1, logOnly: true });
    expect(byId[FAILER]).toMatchObject({ calls: 0, reads: 0, failed: 2, logOnly: true });
    expect(Date.parse(byId[READER].first)).toBeLessThanOrEqual(Date.parse(byId[READER].last));

    const listPage = await get('/sessions');
    expect(listPage.status).toBe(200);
    const readerRow = listPage.text.split('<tr').find((row) => row.includes(`href="/sessions/${READER}"`))!;
    expect(readerRow).toContain('class="log-only"');
    expect(readerRow).toContain('no commits');
    const writerRow = listPage.text.split('<tr').find((row) => row.includes(`href="/sessions/${WRITER}"`))!;
    expect(writerRow).not.toContain('no commits');

    const page = await get(`/sessions/${READER}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('no commits</span> 2 reads and 1 failed call');
    expect(page.text).toContain('known only from the call log');
    expect(page.text).not.toContain('Roll back this session');
    const rows = page.text.slice(page.text.indexOf('id="all-calls"')).split('<tr class="call-').slice(1);
    expect(rows.map((r) => [r.slice(0, r.indexOf('"')), /<code>(toolu_\w+)<\/code>/.exec(r)?.[1]])).toEqual([
      ['read', 'toolu_r1'],
      ['read', 'toolu_r2'],
      ['failed', 'toolu_r3'],
    ]);
    expect(rows[2]).toContain('<strong>failed</strong>');

    const api = (await get(`/api/sessions/${READER}`)).body;
    expect(api).toMatchObject({ id: READER, logOnly: true, calls: 0, reads: 2, failed: 1, first: null, last: null, page: [], combined: [] });
    expect(api.allCalls.map((c: { id: string; kind: string; ok: boolean }) => [c.id, c.kind, c.ok])).toEqual([
      ['toolu_r1', 'read', true],
      ['toolu_r2', 'read', true],
      ['toolu_r3', 'failed', false],
    ]);

    const failer = await get(`/sessions/${FAILER}`);
    expect(failer.status).toBe(200);
    expect(failer.text).toContain('0 reads and 2 failed calls');
    expect(failer.text).toContain('old_str');

    // The writer's page counts its read too; unknown sessions (and the refused id) are still 404.
    expect((await get(`/api/sessions/${WRITER}`)).body).toMatchObject({ logOnly: false, calls: 1, reads: 1, failed: 0 });
    expect((await get('/sessions/sess_nobody')).status).toBe(404);
    expect((await get('/sessions/0123abcd')).status).toBe(404);
    expect((await get(`/sessions/${READER}?from=2`)).status).toBe(400);
  } finally {
    await store.close();
  }
});
