import { RollbackRefusedError } from '../../src/store/errors';
import type { MemoryStore } from '../../src/store/memory-store';
import { gitReport, storeFingerprint } from '../store/git-helpers';
import { call, create, dispose, git, insert, memoryListing, newStore, OPERATOR, remove, rename, replace, show, view } from './helpers';

describe('restore a path as it was after a call', () => {
  let store: MemoryStore;
  beforeEach(async () => {
    store = await newStore();
  });
  afterEach(async () => dispose(store));

  it('brings back a deleted file, and records the later calls it undoes', async () => {
    const at = await call(store, 'toolu_01', create('/memories/prefs.md', 'tabs\n'));
    const edit = await call(store, 'toolu_02', replace('/memories/prefs.md', 'tabs', 'spaces'));
    await call(store, 'toolu_03', create('/memories/other.md', 'o\n'));
    const gone = await call(store, 'toolu_04', remove('/memories/prefs.md'));

    const outcome = await store.restore('/memories/prefs.md', { ...OPERATOR, at: 'toolu_01' });

    expect(outcome.status).toBe('committed');
    expect(outcome.title).toBe('restore /memories/prefs.md at toolu_01');
    expect(outcome.reverts).toEqual([gone, edit]);
    expect(show(store.dir, 'memories/prefs.md')).toBe('tabs');
    expect(git(store.dir, 'rev-parse', 'HEAD:memories/prefs.md')).toBe(git(store.dir, 'rev-parse', `${at}:memories/prefs.md`));
    expect(show(store.dir, 'memories/other.md')).toBe('o');
    const message = gitReport(store.dir).commits.at(-1)!.message;
    expect(message).toBe(`restore /memories/prefs.md at toolu_01\n\nMemory-Actor: operator:alice\nMemory-Reverts: ${gone}\nMemory-Reverts: ${edit}\n`);
  });

  it('restores a directory exactly: later files in it go, earlier ones come back, the rest stays', async () => {
    await call(store, 'toolu_01', create('/memories/proj/a.md', 'a\n'));
    await call(store, 'toolu_02', create('/memories/proj/sub/b.md', 'b\n'));
    const at = await call(store, 'toolu_03', create('/memories/elsewhere.md', 'e\n'));
    await call(store, 'toolu_04', create('/memories/proj/later.md', 'l\n'));
    await call(store, 'toolu_05', remove('/memories/proj/sub'));
    await call(store, 'toolu_06', replace('/memories/elsewhere.md', 'e', 'E'));

    const refused = await store.restore('/memories/proj', { ...OPERATOR, at: 'toolu_03' }).catch((e: unknown) => e);
    expect((refused as Error).message).toBe(
      'restore /memories/proj at toolu_03 would delete /memories/proj/later.md (not there after toolu_03); nothing was written. Pass --delete (library: `delete: true`) to delete.',
    );
    await store.restore('/memories/proj', { ...OPERATOR, at: 'toolu_03', delete: true });

    expect(git(store.dir, 'rev-parse', 'HEAD:memories/proj')).toBe(git(store.dir, 'rev-parse', `${at}:memories/proj`));
    expect(show(store.dir, 'memories/elsewhere.md')).toBe('E');
    expect(gitReport(store.dir).status).toBe('');
  });

  it('restoring a path that did not exist yet removes it, only with delete; nonsense is refused', async () => {
    await call(store, 'toolu_01', create('/memories/a.md', 'a\n'));
    await call(store, 'toolu_02', create('/memories/leak.md', 'secret\n'));
    const untouched = storeFingerprint(store.dir);
    for (const dryRun of [false, true]) {
      const refused = await store.restore('/memories/leak.md', { ...OPERATOR, at: 'toolu_01', dryRun }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RollbackRefusedError);
      expect((refused as Error).message).toContain('would delete /memories/leak.md (not there after toolu_01); nothing was written');
    }
    expect(storeFingerprint(store.dir)).toBe(untouched);
    const outcome = await store.restore('/memories/leak.md', { ...OPERATOR, at: 'toolu_01', delete: true });
    expect(outcome.files.map((f) => [f.status, f.oldPath])).toEqual([['deleted', '/memories/leak.md']]);
    expect(memoryListing(store.dir)).not.toContain('leak.md');
    const before = storeFingerprint(store.dir);
    await expect(store.restore('/memories/../etc/passwd', { ...OPERATOR, at: 'toolu_01' })).rejects.toThrow(RollbackRefusedError);
    await expect(store.restore('/memories/never.md', { ...OPERATOR, at: 'toolu_01' })).rejects.toThrow(/nothing at \/memories\/never\.md/);
    await expect(store.restore('/memories/a.md/x', { ...OPERATOR, at: 'toolu_01' })).rejects.toThrow(RollbackRefusedError);
    expect(storeFingerprint(store.dir)).toBe(before);
  });
});

describe('restore follows renames', () => {
  let store: MemoryStore;
  beforeEach(async () => {
    store = await newStore();
  });
  afterEach(async () => dispose(store));

  it('restores a renamed file with its former name’s content at that point, deleting nothing', async () => {
    const created = await call(store, 'toolu_01', create('/memories/a.md', 'first\n'));
    const moved = await call(store, 'toolu_02', rename('/memories/a.md', '/memories/b.md'));
    const edited = await call(store, 'toolu_03', replace('/memories/b.md', 'first', 'second'));

    const outcome = await store.restore('/memories/b.md', { ...OPERATOR, at: 'toolu_01' });

    expect(outcome.status).toBe('committed');
    expect(outcome.title).toBe('restore /memories/b.md at toolu_01 (then /memories/a.md)');
    expect(outcome.reverts).toEqual([edited, moved]);
    expect(outcome.files.map((f) => [f.status, f.oldPath, f.newPath])).toEqual([['modified', '/memories/b.md', '/memories/b.md']]);
    expect(git(store.dir, 'rev-parse', 'HEAD:memories/b.md')).toBe(git(store.dir, 'rev-parse', `${created}:memories/a.md`));
    expect(memoryListing(store.dir)).not.toContain('a.md');
    expect(gitReport(store.dir).status).toBe('');
  });

  it('follows a renamed directory above the file, and a chain of renames', async () => {
    const at = await call(store, 'toolu_01', create('/memories/drafts/plan.md', 'v1\n'));
    await call(store, 'toolu_02', replace('/memories/drafts/plan.md', 'v1', 'v2'));
    await call(store, 'toolu_03', rename('/memories/drafts', '/memories/projects'));
    await call(store, 'toolu_04', rename('/memories/projects/plan.md', '/memories/projects/roadmap.md'));

    const outcome = await store.restore('/memories/projects/roadmap.md', { ...OPERATOR, at: 'toolu_01' });
    expect(outcome.title).toBe('restore /memories/projects/roadmap.md at toolu_01 (then /memories/drafts/plan.md)');
    expect(git(store.dir, 'rev-parse', 'HEAD:memories/projects/roadmap.md')).toBe(git(store.dir, 'rev-parse', `${at}:memories/drafts/plan.md`));
    expect(await view(store, '/memories/projects/roadmap.md')).toContain('     1\tv1');

    const dir = await store.restore('/memories/projects', { ...OPERATOR, at: 'toolu_02', dryRun: true, delete: true });
    expect(dir.title).toBe('restore /memories/projects at toolu_02 (then /memories/drafts)');
    // The directory as drafts/ was after toolu_02: plan.md (v2) comes back, roadmap.md (a later name) goes.
    expect(dir.files.map((f) => [f.status, f.oldPath, f.newPath])).toEqual([
      ['added', null, '/memories/projects/plan.md'],
      ['deleted', '/memories/projects/roadmap.md', null],
    ]);
  });

  it('follows a rename that an operator’s revert undid', async () => {
    const at = await call(store, 'toolu_01', create('/memories/a.md', 'one\n'));
    await call(store, 'toolu_02', rename('/memories/a.md', '/memories/b.md'));
    await call(store, 'toolu_03', insert('/memories/b.md', 1, 'two'));
    await store.revert('toolu_02', OPERATOR); // b.md moves back to a.md, with the insert
    const outcome = await store.restore('/memories/a.md', { ...OPERATOR, at: 'toolu_01' });
    expect(outcome.title).toBe('restore /memories/a.md at toolu_01');
    expect(git(store.dir, 'rev-parse', 'HEAD:memories/a.md')).toBe(git(store.dir, 'rev-parse', `${at}:memories/a.md`));
    expect(outcome.reverts).toHaveLength(3);
  });
});

describe('roll back a session', () => {
  let store: MemoryStore;
  beforeEach(async () => {
    store = await newStore();
  });
  afterEach(async () => dispose(store));

  it('undoes every call of the session as one commit, newest first, keeping other sessions\' work', async () => {
    await call(store, 'toolu_00', create('/memories/facts.md', 'one\ntwo\nthree\nfour\nfive\n'), 'sess_good');
    const s1 = await call(store, 'toolu_b1', replace('/memories/facts.md', 'two', 'two (poisoned)'), 'sess_bad');
    const s2 = await call(store, 'toolu_b2', create('/memories/bad/notes.md', 'evil\n'), 'sess_bad');
    await call(store, 'toolu_g1', replace('/memories/facts.md', 'five', 'five (verified)'), 'sess_good');
    const s3 = await call(store, 'toolu_b3', rename('/memories/bad/notes.md', '/memories/bad/renamed.md'), 'sess_bad');
    const s4 = await call(store, 'toolu_b4', insert('/memories/bad/renamed.md', 1, 'more evil'), 'sess_bad');

    const outcome = await store.rollbackSession('sess_bad', { ...OPERATOR, reason: 'injected session' });

    expect(outcome.status).toBe('committed');
    expect(outcome.reverts).toEqual([s4, s3, s2, s1]);
    expect(show(store.dir, 'memories/facts.md')).toBe('one\ntwo\nthree\nfour\nfive (verified)');
    expect(memoryListing(store.dir)).toMatch(/^100644 blob [0-9a-f]{40}\tfacts\.md$/);
    const report = gitReport(store.dir);
    expect(report.commits).toHaveLength(8);
    expect(report.commits.at(-1)!.trailers.trimEnd()).toBe(
      ['Memory-Actor: operator:alice', ...[s4, s3, s2, s1].map((c) => `Memory-Reverts: ${c}`), 'Memory-Reason: injected session'].join('\n'),
    );
    expect(report.fsckCode).toBe(0);
    expect(report.status).toBe('');
    expect(await view(store, '/memories')).not.toContain('bad');
  });

  it('a session that edited its own lines several times rolls back cleanly to before it', async () => {
    await call(store, 'toolu_00', create('/memories/facts.md', 'one\ntwo\n'), 'sess_good');
    const before = git(store.dir, 'rev-parse', 'HEAD:memories');
    await call(store, 'toolu_b1', replace('/memories/facts.md', 'two', 'TWO'), 'sess_bad');
    await call(store, 'toolu_b2', replace('/memories/facts.md', 'TWO', 'TWO!'), 'sess_bad');
    await call(store, 'toolu_b3', create('/memories/x/y.md', 'y\n'), 'sess_bad');
    await call(store, 'toolu_b4', remove('/memories/x'), 'sess_bad');
    const outcome = await store.rollbackSession('sess_bad', OPERATOR);
    expect(outcome.status).toBe('committed');
    expect(git(store.dir, 'rev-parse', 'HEAD:memories')).toBe(before);
  });

  it('refuses when another session later changed lines the session wrote, naming that call', async () => {
    await call(store, 'toolu_00', create('/memories/facts.md', 'one\ntwo\n'), 'sess_good');
    await call(store, 'toolu_b1', replace('/memories/facts.md', 'two', 'TWO'), 'sess_bad');
    await call(store, 'toolu_g1', replace('/memories/facts.md', 'TWO', 'TWO!'), 'sess_good');
    const head = git(store.dir, 'rev-parse', 'HEAD');
    const outcome = await store.rollbackSession('sess_bad', OPERATOR);
    expect(outcome.status).toBe('conflict');
    expect(outcome.conflicts.map((c) => [c.path, c.lines, c.calls.map((x) => x.toolUseId)])).toEqual([['/memories/facts.md', { from: 2, to: 2 }, ['toolu_g1']]]);
    expect(git(store.dir, 'rev-parse', 'HEAD')).toBe(head);
    await expect(store.rollbackSession('sess_unknown', OPERATOR)).rejects.toThrow(RollbackRefusedError);
  });
});

describe('reset to a point', () => {
  let store: MemoryStore;
  beforeEach(async () => {
    store = await newStore();
  });
  afterEach(async () => dispose(store));

  it('makes one commit whose memory tree equals the memory at a tool_use id (compared by git)', async () => {
    await call(store, 'toolu_01', create('/memories/a.md', 'a\n'));
    const point = await call(store, 'toolu_02', create('/memories/d/b.md', 'b\n'));
    const later = [
      await call(store, 'toolu_03', remove('/memories/d')),
      await call(store, 'toolu_04', replace('/memories/a.md', 'a', 'A')),
      await call(store, 'toolu_05', create('/memories/c.md', 'c\n')),
    ];
    const outcome = await store.reset({ ...OPERATOR, to: 'toolu_02' });
    expect(outcome.status).toBe('committed');
    expect(outcome.reverts).toEqual(later.reverse());
    expect(git(store.dir, 'rev-parse', 'HEAD:memories')).toBe(git(store.dir, 'rev-parse', `${point}:memories`));
    expect(git(store.dir, 'ls-tree', '-r', 'HEAD')).toBe(git(store.dir, 'ls-tree', '-r', point));
    expect(gitReport(store.dir).status).toBe('');
    expect(git(store.dir, 'log', '-1', '--format=%s')).toBe('reset to toolu_02');
  });

  it('resets to an ISO time (the last commit at or before it), to the empty store, and is a no-op when already there', async () => {
    await call(store, 'toolu_01', create('/memories/a.md', 'a\n'));
    const first = git(store.dir, 'rev-list', '--max-parents=0', 'HEAD');
    const when = new Date(store.history.byToolUseId('toolu_01')!.time * 1000 + 500).toISOString();
    await call(store, 'toolu_02', create('/memories/b.md', 'b\n'));
    const byTime = await store.reset({ ...OPERATOR, to: when, dryRun: true });
    // Commits land within the same second in a test, so the point is the last one at or before that time.
    const expected = store.history.all().filter((e) => e.time * 1000 <= Date.parse(when)).at(-1)!;
    expect(byTime.title).toBe(`reset to ${when} (${expected.commit.slice(0, 12)})`);
    await expect(store.reset({ ...OPERATOR, to: '1999-01-01T00:00:00Z' })).rejects.toThrow(/the store did not exist yet at 1999-01-01T00:00:00Z/);

    await store.reset({ ...OPERATOR, to: first });
    expect(git(store.dir, 'rev-parse', 'HEAD:memories')).toBe(git(store.dir, 'rev-parse', `${first}:memories`));
    const head = git(store.dir, 'rev-parse', 'HEAD');
    expect((await store.reset({ ...OPERATOR, to: first })).status).toBe('unchanged');
    expect(git(store.dir, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('a rollback waits for, and is serialised with, concurrent agent writes', async () => {
    await call(store, 'toolu_01', create('/memories/a.md', 'a\n'));
    const writes = Array.from({ length: 5 }, (_, i) => call(store, `toolu_c${i}`, create(`/memories/c${i}.md`, `${i}\n`)));
    const reset = store.reset({ ...OPERATOR, to: 'toolu_01' });
    await Promise.all([...writes, reset]);
    const report = gitReport(store.dir);
    expect(report.fsckCode).toBe(0);
    expect(report.status).toBe('');
    // Every commit has exactly one parent chain; the reset landed whole, somewhere in the sequence.
    expect(report.commits).toHaveLength(8);
    expect(report.commits.filter((c) => c.message.startsWith('reset to toolu_01'))).toHaveLength(1);
  });
});
