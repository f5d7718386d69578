/**
 * StoreOptions.clock: the time a store records on its commits (agent calls, rollbacks, the first commit),
 * its call log and its timeline, for replays such as `memgit demo`. Checked with the real git CLI. Only the
 * program that opens the store sets it: nothing a call carries (its block, its input, its context) dates a
 * commit, and a clock that returns garbage fails the write instead of dating it wrongly.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { QUIET, toolUse, useTempDir } from './git-helpers';

const tempDir = useTempDir();

/** Author and committer time (seconds) and subject of every commit, newest first, as git reads them. */
function gitTimes(dir: string): Array<{ author: number; committer: number; subject: string }> {
  const run = spawnSync('git', ['log', '--format=%at %ct %s'], { cwd: dir, encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout.trim().split('\n').map((line) => {
    const [author, committer, ...subject] = line.split(' ');
    return { author: Number(author), committer: Number(committer), subject: subject.join(' ') };
  });
}

const at = (iso: string) => Date.parse(iso);

test('commits, the call log and timeline events carry the clock\'s time', async () => {
  const dir = path.join(tempDir(), 'store');
  let now = at('2026-11-24T09:15:00Z');
  const store = await MemoryStore.open(dir, { ...QUIET, clock: () => now });
  try {
    now = at('2026-11-24T09:15:44Z');
    await store.execute(toolUse('toolu_c1', { command: 'create', path: '/memories/a.md', file_text: 'one\n' }), { session: 'sess_clock' });
    now = at('2026-11-24T09:16:05Z');
    await store.execute(toolUse('toolu_v1', { command: 'view', path: '/memories/a.md' }), { session: 'sess_clock' });
    await store.recordEvent('sess_clock', { kind: 'compaction', summary: 'so far', afterToolUseId: 'toolu_c1' });
    now = at('2026-11-26T14:30:52Z');
    expect((await store.revert('toolu_c1', { operator: 'sam' })).status).toBe('committed');
    await store.settled();

    expect(gitTimes(dir)).toEqual([
      { author: at('2026-11-26T14:30:52Z') / 1000, committer: at('2026-11-26T14:30:52Z') / 1000, subject: 'revert toolu_c1' },
      { author: at('2026-11-24T09:15:44Z') / 1000, committer: at('2026-11-24T09:15:44Z') / 1000, subject: 'toolu_c1' },
      { author: at('2026-11-24T09:15:00Z') / 1000, committer: at('2026-11-24T09:15:00Z') / 1000, subject: 'memgit: initialise store' },
    ]);
    expect(store.history.byToolUseId('toolu_c1')?.time).toBe(at('2026-11-24T09:15:44Z') / 1000);
    // Points in time resolve against those times.
    expect((await store.resolvePoint('2026-11-25')).commit).toBe(store.history.byToolUseId('toolu_c1')?.commit);
    const events = await store.timeline.forSession('sess_clock');
    expect(events.map((e) => e.time)).toEqual([at('2026-11-24T09:16:05Z')]);
  } finally {
    await store.close();
  }
  const reopened = await MemoryStore.open(dir, { ...QUIET, create: false });
  try {
    const calls = await reopened.callLog.read();
    expect(calls.map((c) => [c.id, c.time])).toEqual([
      ['toolu_c1', at('2026-11-24T09:15:44Z')],
      ['toolu_v1', at('2026-11-24T09:16:05Z')],
    ]);
  } finally {
    await reopened.close();
  }
});

test('without a clock, nothing a call carries dates its commit: it is the time of the write', async () => {
  const dir = path.join(tempDir(), 'store');
  const store = await MemoryStore.open(dir, QUIET);
  const forged = Date.parse('2001-01-01T00:00:00Z');
  const before = Math.floor(Date.now() / 1000);
  try {
    const block = { ...toolUse('toolu_f1', { command: 'create', path: '/memories/a.md', file_text: 'x\n', time: forged, clock: forged }), time: forged, timestamp: forged };
    const context = { session: 'sess_forge', time: forged, clock: () => forged } as unknown as { session: string };
    expect((await store.execute(block, context)).is_error).toBeUndefined();
    await store.recordEvent('sess_forge', { kind: 'compaction', summary: 's' });
  } finally {
    await store.close();
  }
  const after = Math.ceil(Date.now() / 1000);
  const [latest] = gitTimes(dir);
  expect(latest.subject).toBe('toolu_f1');
  for (const time of [latest.author, latest.committer]) {
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  }
});

test('a clock that is not a function is refused before anything is created', async () => {
  const dir = path.join(tempDir(), 'store');
  const error = await MemoryStore.open(dir, { clock: 1_700_000_000_000 as never }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe('clock must be a function returning milliseconds since the epoch, got number');
  expect(fs.existsSync(dir)).toBe(false);
});

test('a clock that returns garbage fails the write (not applied, nothing committed) instead of dating it wrongly', async () => {
  const dir = path.join(tempDir(), 'store');
  let now: number = at('2026-11-24T09:15:00Z');
  const logged: string[] = [];
  const store = await MemoryStore.open(dir, { log: (m) => logged.push(m), clock: () => now });
  try {
    now = Number.NaN;
    const result = await store.execute(toolUse('toolu_bad', { command: 'create', path: '/memories/a.md', file_text: 'x\n' }), { session: 'sess_clock' });
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/^Error: The memory store could not complete this command .*Nothing was changed\.$/);
    expect(logged.join('\n')).toContain("the store's clock returned null");
    expect(gitTimes(dir).map((c) => c.subject)).toEqual(['memgit: initialise store']);
  } finally {
    now = at('2026-11-24T09:16:00Z');
    await store.close();
  }
});
