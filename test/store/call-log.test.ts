/**
 * Reads and failed calls on the record: the call log beside the history (.git/memgit/calls-v1.jsonl), what
 * `memgit show` / `log --all-calls` and the session page make of it, its cost model and its retention.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { listCalls } from '../../src/history/calls';
import { MemoryStore } from '../../src/store/memory-store';
import { createApp } from '../../src/web/app';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { gitReport, makeTempDir, removeDir } from './git-helpers';

const SESSION = 'sess_calls';
const block = (id: unknown, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input }) as const;
const logFile = (store: MemoryStore) => path.join(store.gitdir, 'memgit', 'calls-v1.jsonl');
const loggedIds = (store: MemoryStore) =>
  fs.existsSync(logFile(store)) ? fs.readFileSync(logFile(store), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).id) : [];
const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs/records.schema.json'), 'utf8'));

describe('the call log', () => {
  let dir: string;
  let store: MemoryStore;
  const heads: string[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    dir = makeTempDir('memgit-calls-');
    store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    const run = (id: unknown, input: Record<string, unknown>) => store.execute(block(id, input), { session: SESSION });
    heads.push(store.history.head!.commit);
    await run('toolu_c1_view', { command: 'view', path: '/memories' });
    // A view is buffered: no file operation before it is answered.
    expect(loggedIds(store)).toEqual([]);
    await run('toolu_c2_create', { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' });
    // A write's line is appended, after the buffered view, before the write is acknowledged.
    expect(loggedIds(store)).toEqual(['toolu_c1_view', 'toolu_c2_create']);
    heads.push(store.history.head!.commit);
    await run('toolu_c3_fail', { command: 'str_replace', path: '/memories/a.md', old_str: 'zzz', new_str: 'y' });
    await run('toolu_c4_view', { command: 'view', path: '/memories/a.md' });
    await run('toolu_c5_bad', { command: 'view', path: 'relative.md' });
    await run('bad id!', { command: 'view', path: '/memories' });
    await store.close();
  });

  afterAll(() => removeDir(dir));

  it('records every call in order: reads, writes and failures, with the commit each read at', async () => {
    const reopened = await MemoryStore.open(dir, { create: false, log: () => undefined });
    const calls = await listCalls(reopened);
    await reopened.close();
    expect(calls.map((c) => [c.id, c.kind, c.ok, c.command, c.paths, c.readAt])).toEqual([
      ['toolu_c1_view', 'read', true, 'view', ['/memories'], heads[0]],
      ['toolu_c2_create', 'write', true, 'create', ['/memories/a.md'], heads[0]],
      ['toolu_c3_fail', 'failed', false, 'str_replace', ['/memories/a.md'], heads[1]],
      ['toolu_c4_view', 'read', true, 'view', ['/memories/a.md'], heads[1]],
      ['toolu_c5_bad', 'failed', false, 'view', ['relative.md'], heads[1]],
      ['bad id!', 'failed', false, 'view', ['/memories'], null],
    ]);
    expect(calls[1].commit).toBe(heads[1]);
    expect(calls[2].error).toBe('No replacement was performed, old_str `zzz` did not appear verbatim in /memories/a.md.');
    expect(calls[5].error).toBe('Error: Invalid tool_use id "bad id!"');
    for (const call of calls) {
      expect(Object.keys(call).sort()).toEqual([...schema.$defs.call.required].sort());
      expect(call.schema).toBe('memgit.call/1');
      expect(call.session).toBe(SESSION);
    }
    // Beside the history, not in it: one commit for the one write, and git sees nothing new.
    const report = gitReport(dir);
    expect(report.commits.map((c) => c.message.split('\n')[0])).toEqual(['memgit: initialise store', 'toolu_c2_create']);
    expect(report.status).toBe('');
    expect(report.fsckCode).toBe(0);
  });

  it('memgit show <id of a view or a failed call> shows the call; log --all-calls lists every call, marked', () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', dir], { encoding: 'utf8' });
    const view = cli('show', 'toolu_c4_view');
    expect(view.status).toBe(0);
    expect(view.stdout).toBe(
      `call    toolu_c4_view (read: no commit)\nsession ${SESSION}\ndate    ${view.stdout.split('\n')[2].slice(8)}\ncommand view\npath    /memories/a.md\nread at ${heads[1]}\nresult  ok\n`,
    );
    const failed = JSON.parse(cli('show', 'toolu_c3_fail', '--json').stdout);
    expect(failed).toMatchObject({ schema: 'memgit.call/1', id: 'toolu_c3_fail', kind: 'failed', ok: false, commit: null, readAt: heads[1] });
    const unknown = cli('show', 'toolu_never');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe('memgit: no commit or tool_use id "toolu_never" in this store\n');

    const all = cli('log', '--all-calls');
    expect(all.status).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/^\S+Z  sess_calls  FAILED  view \/memories  bad id!  error: Invalid tool_use id "bad id!"$/);
    expect(lines[3]).toMatch(new RegExp(`^\\S+Z  sess_calls  FAILED  str_replace /memories/a.md  toolu_c3_fail  error: No replacement was performed`));
    expect(lines[4]).toMatch(new RegExp(`^\\S+Z  sess_calls  write   create /memories/a.md  toolu_c2_create  ${heads[1].slice(0, 12)}$`));
    expect(lines[5]).toMatch(/^\S+Z  sess_calls  read    view \/memories  toolu_c1_view$/);
    const json = cli('log', '--all-calls', '--json', '-n', '2').stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(json.map((c) => c.id)).toEqual(['bad id!', 'toolu_c5_bad']);
  });

  it('the session page and its JSON twin show reads and failures in order, marked', async () => {
    const reopened = await MemoryStore.open(dir, { create: false, log: () => undefined });
    try {
      const app = createApp({ store: reopened, log: () => undefined });
      const json = (await request(app).get(`/api/sessions/${SESSION}`).set('Host', '127.0.0.1')).body;
      expect(json.allCalls.map((c: { id: string; kind: string }) => [c.id, c.kind])).toEqual([
        ['toolu_c1_view', 'read'],
        ['toolu_c2_create', 'write'],
        ['toolu_c3_fail', 'failed'],
        ['toolu_c4_view', 'read'],
        ['toolu_c5_bad', 'failed'],
        ['bad id!', 'failed'],
      ]);
      const html = (await request(app).get(`/sessions/${SESSION}`).set('Host', '127.0.0.1')).text;
      expect(html).toContain('All calls, with reads and failures');
      expect(html.match(/<tr class="call-failed">/g)).toHaveLength(3);
      expect(html.match(/<tr class="call-read">/g)).toHaveLength(2);
      expect(html).toContain('Error: Invalid tool_use id &quot;bad id!&quot;');
    } finally {
      await reopened.close();
    }
  });

  it('lists a write from history when its log line is missing', async () => {
    const copy = makeTempDir('memgit-calls-copy-');
    try {
      fs.cpSync(dir, copy, { recursive: true });
      fs.rmSync(path.join(copy, '.git/memgit/calls-v1.jsonl'));
      const reopened = await MemoryStore.open(copy, { create: false, log: () => undefined });
      const calls = await listCalls(reopened);
      await reopened.close();
      expect(calls.map((c) => [c.id, c.kind, c.commit, c.readAt])).toEqual([['toolu_c2_create', 'write', heads[1], heads[0]]]);
    } finally {
      removeDir(copy);
    }
  });
});

describe('call log retention', () => {
  it('keeps the newest callLogMaxEntries calls, and 0 turns the log off', async () => {
    const dir = makeTempDir('memgit-calls-retention-');
    try {
      let store = await MemoryStore.open(dir, { fsync: false, log: () => undefined, callLogMaxEntries: 5 });
      for (let i = 0; i < 60; i++) await store.execute(block(`toolu_r${i}`, { command: 'view', path: '/memories' }), { session: SESSION });
      await store.close();
      expect(loggedIds(store)).toHaveLength(60);
      store = await MemoryStore.open(dir, { fsync: false, log: () => undefined, callLogMaxEntries: 5 });
      expect(loggedIds(store)).toEqual(['toolu_r55', 'toolu_r56', 'toolu_r57', 'toolu_r58', 'toolu_r59']);
      await store.close();

      const off = makeTempDir('memgit-calls-off-');
      const quiet = await MemoryStore.open(off, { fsync: false, log: () => undefined, callLogMaxEntries: 0 });
      await quiet.execute(block('toolu_q', { command: 'view', path: '/memories' }), { session: SESSION });
      await quiet.close();
      expect(fs.existsSync(logFile(quiet))).toBe(false);
      removeDir(off);
      await expect(MemoryStore.open(off, { callLogMaxEntries: -1 })).rejects.toThrow('callLogMaxEntries must be a non-negative integer, got -1');
    } finally {
      removeDir(dir);
    }
  });
});
