/**
 * `memgit demo --review flagged` (issue 27): the recorded conversations replay with the same tool_results
 * (the build checks each against the recording: the agent cannot tell), but the planted "fact" of the
 * third conversation waits on its session's review branch: main never has it, the session's later writes
 * wait with it, and approving the good calls while leaving the planted one out keeps it off main.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { buildDemoStore } from '../../src/agent/demo/build';
import { INJECTED_SESSION, INJECTED_TOOL_USE_ID } from '../../src/agent/demo/transcript';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';

const git = (dir: string, ...args: string[]) => {
  const run = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout;
};

it('holds the planted fact for review; approving the other calls keeps it off main', async () => {
  const base = makeTempDir('memgit-demo-review-');
  const dir = path.join(base, 'demo');
  try {
    const built = await buildDemoStore(dir, { review: 'flagged' }); // verify: every tool_result as recorded
    // The demo's dream is written against the recording's main: not run when a policy held part of it.
    expect(built.dream).toBeNull();
    expect(git(dir, 'log', '-S', 'pre-approved', '--format=%s', 'main')).toBe('');
    const store = await MemoryStore.open(dir, { log: () => undefined, replicate: false });
    try {
      const pending = (await store.reviews()).filter((r) => r.state === 'pending');
      expect(pending.map((r) => r.session)).toEqual([INJECTED_SESSION]);
      const calls = pending[0].calls.map((c) => c.toolUseId);
      expect(calls[0]).toBe(INJECTED_TOOL_USE_ID);
      const detail = await store.review(pending[0].id);
      expect(detail.calls[0].detection.verdict).toBe('hold');
      const good = calls.filter((c) => c !== INJECTED_TOOL_USE_ID);
      if (good.length > 0) {
        const { commits } = await store.approveReview(pending[0].id, { operator: 'dana', calls: good });
        expect(commits).toHaveLength(good.length);
      } else {
        await store.rejectReview(pending[0].id, { operator: 'dana' });
      }
      expect(git(dir, 'log', '-S', 'pre-approved', '--format=%s', 'main')).toBe('');
      const fsck = spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
      expect([fsck.status, fsck.stdout + fsck.stderr]).toEqual([0, '']);
    } finally {
      await store.close();
    }
  } finally {
    removeDir(base);
  }
}, 180_000);
