import { MemoryStore } from '../../src/store/memory-store';
import { InvalidPointError, PointNotFoundError } from '../../src/store/errors';
import { parseIsoTime } from '../../src/store/points';
import { QUIET, toolUse, useTempDir } from './git-helpers';

/** Hostile ids: an agent naming its call after HEAD, a time or another commit must not hijack a point. */
describe('resolvePoint', () => {
  const tempDir = useTempDir();

  it('refuses a ref that two readings send to different commits, and accepts the full commit id', async () => {
    const store = await MemoryStore.open(tempDir(), QUIET);
    try {
      await store.execute(toolUse('toolu_1', { command: 'create', path: '/memories/a.md', file_text: 'a' }), { session: 's' });
      const first = store.history.head!.commit;
      await store.execute(toolUse('HEAD', { command: 'create', path: '/memories/b.md', file_text: 'b' }), { session: 's' });
      // "HEAD" is this very call's id and HEAD: the same commit, so no ambiguity.
      expect((await store.resolvePoint('HEAD')).toolUseId).toBe('HEAD');
      // A tool_use id that could be read as a commit id is refused (issue 19), so a prefix stays a commit.
      const hexId = await store.execute(toolUse(first.slice(0, 8), { command: 'create', path: '/memories/c.md', file_text: 'c' }), { session: 's' });
      expect(hexId.is_error).toBe(true);
      await store.execute(toolUse('2001-01-01', { command: 'create', path: '/memories/d.md', file_text: 'd' }), { session: 's' });
      // Now the call named HEAD is no longer HEAD: refused, naming both; HEAD~0 is unambiguous.
      await expect(store.resolvePoint('HEAD')).rejects.toThrow(/"HEAD" names more than one point: HEAD \(commit .*\); tool_use id HEAD/);
      expect((await store.resolvePoint('HEAD~0')).toolUseId).toBe('2001-01-01');
      expect((await store.resolvePoint(first.slice(0, 8))).commit).toBe(first);
      expect((await store.resolvePoint(first)).commit).toBe(first);
      // A time before the store existed would be "not found"; the call of that name is what it names.
      expect((await store.resolvePoint('2001-01-01')).toolUseId).toBe('2001-01-01');
      await expect(store.resolvePoint('HEAD~99')).rejects.toThrow(PointNotFoundError);
      await expect(store.resolvePoint('HEAD~x')).rejects.toThrow(/no commit or tool_use id/);
      await expect(store.resolvePoint('a b')).rejects.toThrow(InvalidPointError);
      await expect(store.resolvePoint('')).rejects.toThrow(InvalidPointError);
    } finally {
      await store.close();
    }
  });

  it('reads ISO times as UTC when no zone is given, and refuses impossible dates', () => {
    expect(parseIsoTime('2026-12-02T15:30')).toBe(Date.UTC(2026, 11, 2, 15, 30) / 1000);
    expect(parseIsoTime('2026-12-02T15:30+01:00')).toBe(Date.UTC(2026, 11, 2, 14, 30) / 1000);
    expect(parseIsoTime('2026-12-02', { endOfDay: true })).toBe(Date.UTC(2026, 11, 2, 23, 59, 59) / 1000);
    expect(() => parseIsoTime('2026-02-30')).toThrow(InvalidPointError);
    expect(() => parseIsoTime('yesterday')).toThrow(InvalidPointError);
  });
});
