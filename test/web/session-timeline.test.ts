/**
 * The session page's timeline events (compaction summaries, context clears) across pages of calls: each
 * event on the page of the call it follows, those from before the first call on the first page, a bound
 * per page, and the JSON twin with the same data.
 */
import request from 'supertest';
import { MemoryStore } from '../../src/store/memory-store';
import { MAX_EVENTS_PER_PAGE } from '../../src/web/services/sessions';
import { createApp } from '../../src/web/app';
import { QUIET, toolUse, useTempDir } from '../store/git-helpers';

const tempDir = useTempDir();
const SESSION = 'sess_20261203T120000_page';

test('events land on the page of the call they follow; the first page also has those from before any call', async () => {
  const store = await MemoryStore.open(tempDir(), { ...QUIET, fsync: false });
  try {
    const commits: string[] = [];
    for (let i = 1; i <= 52; i += 1) {
      const report = await store.executeWithReport(toolUse(`toolu_page${i}`, { command: 'create', path: `/memories/f${i}.md`, file_text: `${i}\n` }), { session: SESSION });
      commits.push(report.commit!);
    }
    const other = await store.executeWithReport(toolUse('toolu_other', { command: 'create', path: '/memories/other.md', file_text: 'o\n' }), { session: 'sess_other' });
    await store.recordEvent(SESSION, { kind: 'compaction', summary: 'before anything', afterCommit: null });
    await store.recordEvent(SESSION, { kind: 'context_cleared', edit: 'clear_tool_uses_20250919', clearedToolUses: 1, clearedInputTokens: 10, afterCommit: commits[0] });
    await store.recordEvent(SESSION, { kind: 'compaction', summary: 'after call 51', afterCommit: commits[50] });
    // Anchored to another session's commit (not one of this session's): placed by time, after the last call.
    await store.recordEvent(SESSION, { kind: 'compaction', summary: 'by time', afterCommit: other.commit! });
    const app = createApp({ store, log: () => undefined });
    const get = (url: string) => request(app).get(url).set('Host', '127.0.0.1:3000');

    const first = (await get(`/api/sessions/${SESSION}`)).body;
    expect(first.page).toHaveLength(50);
    expect(first.eventsBefore.map((e: { summary: string }) => e.summary)).toEqual(['before anything']);
    expect(first.page[0].eventsAfter).toEqual([expect.objectContaining({ kind: 'context_cleared', detail: 'clear_tool_uses_20250919: 1 tool use, 10 input tokens' })]);
    expect(first.page.slice(1).every((c: { eventsAfter: unknown[] }) => c.eventsAfter.length === 0)).toBe(true);
    expect(first).toMatchObject({ compactions: 3, clears: 1, eventsOmitted: 0 });

    const second = (await get(`/api/sessions/${SESSION}?from=51`)).body;
    expect(second.eventsBefore).toEqual([]);
    expect(second.page.map((c: { step: number; eventsAfter: Array<{ summary: string }> }) => [c.step, c.eventsAfter.map((e) => e.summary)])).toEqual([
      [51, ['after call 51']],
      [52, ['by time']],
    ]);
  } finally {
    await store.close();
  }
});

test('at most MAX_EVENTS_PER_PAGE events on one page; the rest are counted and said', async () => {
  const store = await MemoryStore.open(tempDir(), { ...QUIET, fsync: false });
  try {
    const { commit } = await store.executeWithReport(toolUse('toolu_many', { command: 'create', path: '/memories/m.md', file_text: 'm\n' }), { session: SESSION });
    for (let i = 0; i < MAX_EVENTS_PER_PAGE + 3; i += 1) {
      await store.recordEvent(SESSION, { kind: 'compaction', summary: `summary ${i}`, afterCommit: commit! });
    }
    const app = createApp({ store, log: () => undefined });
    const api = (await request(app).get(`/api/sessions/${SESSION}`).set('Host', '127.0.0.1:3000')).body;
    expect(api.page[0].eventsAfter).toHaveLength(MAX_EVENTS_PER_PAGE);
    expect(api.page[0].eventsAfter.at(-1).summary).toBe(`summary ${MAX_EVENTS_PER_PAGE - 1}`);
    expect(api.eventsOmitted).toBe(3);
    const html = (await request(app).get(`/sessions/${SESSION}`).set('Host', '127.0.0.1:3000')).text;
    expect(html).toContain('3 more context events of these calls not shown.');
  } finally {
    await store.close();
  }
});
