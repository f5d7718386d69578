/**
 * The persisted history index stays one chain — each commit once, in order — when two stores on one
 * repository take turns writing and catch up with each other (as `memgit serve` and an agent's process do).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../../src/store/memory-store';
import { gitReport, QUIET, toolUse, useTempDir } from '../git-helpers';

const tempDir = useTempDir();

test('two stores taking turns on one repository: every commit indexed once, in git order, in both', async () => {
  const dir = tempDir();
  const first = await MemoryStore.open(dir, QUIET);
  const second = await MemoryStore.open(dir, QUIET);
  try {
    for (let i = 0; i < 12; i++) {
      const store = i % 3 === 0 ? second : first;
      const result = await store.execute(toolUse(`toolu_${i}`, { command: 'create', path: `/memories/n${i % 4}.md`, file_text: `v${i}` }), { session: `s${i % 2}` });
      expect(result.is_error).toBeUndefined();
      // The other one catches up (a view does) and then finds the call by its id.
      const other = store === first ? second : first;
      await other.execute(toolUse(`toolu_view_${i}`, { command: 'view', path: '/memories' }), { session: 's0' });
      expect(other.history.byToolUseId(`toolu_${i}`)?.command).toBe('create');
    }
    const gitOrder = gitReport(dir).commits.map((c) => c.oid); // oldest first
    const lines = fs.readFileSync(first.history.file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).commit as string);
    expect(lines).toEqual(gitOrder);
    expect(first.history.all().map((e) => e.commit)).toEqual(gitOrder);
    expect(second.history.all().map((e) => e.commit)).toEqual(gitOrder);
  } finally {
    await first.close();
    await second.close();
  }
  // A fresh open reads the same chain without rewriting it.
  const reopened = await MemoryStore.open(dir, QUIET);
  expect(reopened.history.size).toBe(13);
  await reopened.close();
  expect(fs.readdirSync(path.join(dir, '.git', 'memgit')).filter((n) => n.includes('rewrite'))).toEqual([]);
});
