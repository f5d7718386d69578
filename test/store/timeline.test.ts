/**
 * The session timeline (src/store/timeline.ts): events recorded through the store, stored one JSON line
 * each under .git/memgit/, read back by any process, and never trusted blindly when read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { MAX_SUMMARY_CHARS, Timeline } from '../../src/store/timeline';
import { expectRepository, gitReport, QUIET, toolUse, useTempDir } from './git-helpers';

const tempDir = useTempDir();
const SESSION = 'sess_20261203T090000_tmln';

async function openStore(dir = tempDir()): Promise<MemoryStore> {
  return MemoryStore.open(dir, { ...QUIET, fsync: false });
}

const timelineFile = (dir: string) => path.join(dir, '.git', 'memgit', 'timeline-v1.jsonl');

test('events are recorded after the calls they follow, read back in order, and are not commits', async () => {
  const store = await MemoryStore.open(tempDir(), QUIET); // with fsync, as in use
  try {
    const first = await store.executeWithReport(toolUse('toolu_01TlA', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: SESSION });
    const cleared = await store.recordEvent(SESSION, {
      kind: 'context_cleared',
      edit: 'clear_tool_uses_20250919',
      clearedToolUses: 2,
      clearedInputTokens: 9000,
      afterCommit: first.commit!,
      afterToolUseId: 'toolu_01TlA',
    });
    const summary = await store.recordEvent(SESSION, { kind: 'compaction', summary: 'so far: a', encryptedContent: true, afterCommit: first.commit!, time: 1_764_000_000_123 });
    expect(cleared).toMatchObject({ v: 1, session: SESSION, kind: 'context_cleared', clearedToolUses: 2, clearedInputTokens: 9000, afterToolUseId: 'toolu_01TlA' });
    expect(summary).toEqual({
      v: 1,
      session: SESSION,
      time: 1_764_000_000_123,
      afterCommit: first.commit,
      afterToolUseId: null,
      kind: 'compaction',
      summary: 'so far: a',
      summaryChars: 9,
      truncated: false,
      encryptedContent: true,
    });
    expect(await store.timeline.forSession(SESSION)).toEqual([cleared, summary]);
    expect(await store.timeline.forSession('sess_other')).toEqual([]);
    const lines = fs.readFileSync(timelineFile(store.dir), 'utf8').split('\n');
    expect(lines.map((l) => (l ? JSON.parse(l) : l))).toEqual([cleared, summary, '']);
    expectRepository(gitReport(store.dir), [{ id: 'toolu_01TlA', command: 'create', path: '/memories/a.md', session: SESSION }]);
  } finally {
    await store.close();
  }
});

test('a malformed event is refused (TypeError) and nothing is written', async () => {
  const store = await openStore();
  try {
    const bad: Array<[string, unknown]> = [
      ['bad session', ['sess with space', { kind: 'compaction', summary: 'x' }]],
      ['abbreviated commit', [SESSION, { kind: 'compaction', summary: 'x', afterCommit: 'abc123' }]],
      ['bad tool_use id', [SESSION, { kind: 'compaction', summary: 'x', afterToolUseId: '../../etc' }]],
      ['summary not text', [SESSION, { kind: 'compaction', summary: 42 }]],
      ['negative count', [SESSION, { kind: 'context_cleared', edit: 'clear_tool_uses_20250919', clearedInputTokens: -1 }]],
      ['hostile edit type', [SESSION, { kind: 'context_cleared', edit: '<script>', clearedInputTokens: 1 }]],
      ['unknown kind', [SESSION, { kind: 'memory_warning' }]],
      ['bad time', [SESSION, { kind: 'compaction', summary: 'x', time: 1.5 }]],
    ];
    for (const [label, [session, event]] of bad as Array<[string, [string, never]]>) {
      const outcome = await store.recordEvent(session, event).then(() => 'recorded', (error: Error) => error.constructor.name);
      expect([label, outcome]).toEqual([label, 'TypeError']);
    }
    expect(fs.existsSync(timelineFile(store.dir))).toBe(false);
    expect(await store.timeline.forSession(SESSION)).toEqual([]);
  } finally {
    await store.close();
  }
});

test('a long summary is kept up to the bound (never splitting a character) and says how long it was', async () => {
  const store = await openStore();
  try {
    const long = `${'x'.repeat(MAX_SUMMARY_CHARS - 1)}😀 and more`;
    const record = await store.recordEvent(SESSION, { kind: 'compaction', summary: long });
    expect(record).toMatchObject({ summaryChars: long.length, truncated: true });
    expect(record.kind === 'compaction' && record.summary).toBe('x'.repeat(MAX_SUMMARY_CHARS - 1));
    const failed = await store.recordEvent(SESSION, { kind: 'compaction', summary: null });
    expect(failed).toMatchObject({ summary: null, summaryChars: 0, truncated: false, encryptedContent: false });
    // Read back by a fresh reader, the stored lengths are kept as written.
    const reader = new Timeline(store.gitdir);
    expect(await reader.forSession(SESSION)).toEqual([record, failed]);
  } finally {
    await store.close();
  }
});

test('another process sees what was appended since it last read; a torn last line is ignored, then closed off', async () => {
  const writer = await openStore();
  const dir = writer.dir;
  const reader = await MemoryStore.open(dir, { ...QUIET, fsync: false, create: false });
  try {
    const one = await writer.recordEvent(SESSION, { kind: 'compaction', summary: 'one' });
    expect(await reader.timeline.forSession(SESSION)).toEqual([one]);
    // A writer killed mid-append: half a line, no newline.
    fs.appendFileSync(timelineFile(dir), '{"v":1,"session":"sess_20261203T090000_tmln","kind":"compac');
    expect(await reader.timeline.forSession(SESSION)).toEqual([one]);
    const two = await writer.recordEvent(SESSION, { kind: 'compaction', summary: 'two' });
    expect(await reader.timeline.forSession(SESSION)).toEqual([one, two]);
    expect(reader.timeline.skipped).toBe(1);
    expect(fs.readFileSync(timelineFile(dir), 'utf8').split('\n')).toHaveLength(4); // one, torn, two, ''
  } finally {
    await reader.close();
    await writer.close();
  }
});

test('lines that do not parse or validate are skipped, whatever they claim', async () => {
  const store = await openStore();
  try {
    const good = await store.recordEvent(SESSION, { kind: 'context_cleared', edit: 'clear_thinking_20251015', clearedThinkingTurns: 1, clearedInputTokens: 5 });
    const hostile = [
      'not json',
      '[]',
      JSON.stringify({ ...good, v: 2 }),
      JSON.stringify({ ...good, session: '../../etc/passwd' }),
      JSON.stringify({ ...good, afterCommit: '<img src=x onerror=alert(1)>' }),
      JSON.stringify({ ...good, clearedInputTokens: '12' }),
      JSON.stringify({ v: 1, session: SESSION, time: 1, afterCommit: null, afterToolUseId: null, kind: 'compaction', summary: 'no lengths' }),
      JSON.stringify({ v: 1, session: SESSION, time: 1, afterCommit: null, afterToolUseId: null, kind: 'compaction', summary: 'x'.repeat(300_000), summaryChars: 300_000, truncated: false }),
    ];
    fs.appendFileSync(timelineFile(store.dir), hostile.map((l) => `${l}\n`).join(''));
    const after = await store.recordEvent(SESSION, { kind: 'compaction', summary: 'after' });
    const reader = new Timeline(store.gitdir);
    expect(await reader.forSession(SESSION)).toEqual([good, after]);
    expect(reader.skipped).toBe(hostile.length);
  } finally {
    await store.close();
  }
});

test('appends from two processes never interleave (the store write lock)', async () => {
  const a = await openStore();
  const b = await MemoryStore.open(a.dir, { ...QUIET, fsync: false, create: false });
  try {
    const text = (who: string, i: number) => `${who}-${i} ${'y'.repeat(20_000)}`;
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => a.recordEvent(SESSION, { kind: 'compaction', summary: text('a', i) })),
      ...Array.from({ length: 20 }, (_, i) => b.recordEvent(SESSION, { kind: 'compaction', summary: text('b', i) })),
    ]);
    const reader = new Timeline(a.gitdir);
    const summaries = (await reader.forSession(SESSION)).map((e) => (e.kind === 'compaction' ? e.summary : null));
    expect(reader.skipped).toBe(0);
    expect(summaries).toHaveLength(40);
    // Each process's events keep their order.
    for (const who of ['a', 'b']) {
      expect(summaries.filter((s) => s!.startsWith(`${who}-`))).toEqual(Array.from({ length: 20 }, (_, i) => text(who, i)));
    }
  } finally {
    await b.close();
    await a.close();
  }
});
