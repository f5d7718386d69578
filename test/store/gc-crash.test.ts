/**
 * `memgit gc` killed with SIGKILL at random moments, with both engines (git pack-objects with deltas, and
 * isomorphic-git): after every kill the store reopens by itself, `git fsck --full` is clean, every commit
 * and file is still there, and the store takes the next write; a final gc leaves one pack and no loose
 * object. (The fault sweep fails each fs call of gc in turn; this covers the moments between them and a
 * git process orphaned mid-write.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { MemoryStore } from '../../src/store/memory-store';
import { CLI_MAIN, ensureBuilt } from '../support/dist';
import { mulberry32 } from '../support/random';
import { headFiles, makeTempDir, removeDir, toolUse } from './git-helpers';

const KILLS = 12;

function git(dir: string, args: string): string {
  const run = spawnSync('sh', ['-c', `git ${args}`], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git ${args} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

async function write(dir: string, round: number, calls: number): Promise<void> {
  const store = await MemoryStore.open(dir, { log: () => undefined, autoGcLooseObjects: 0, flags: false });
  for (let i = 0; i < calls; i++) {
    const file = `/memories/round-${round % 4}/note-${i % 9}.md`;
    const text = Array.from({ length: 40 }, (_, k) => `round ${round} call ${i} line ${k}: something worth keeping`).join('\n');
    const result = await store.execute(toolUse(`toolu_gc_${round}_${i}`, { command: 'create', path: file, file_text: `${text}\n` }), { session: `sess_${round}` });
    if (result.is_error) throw new Error(`write failed: ${result.content}`);
  }
  await store.close();
}

/** Run `memgit gc` and kill it with SIGKILL after `afterMs` (or let it finish when that is null). */
function gcKilledAfter(dir: string, engine: string, afterMs: number | null): Promise<{ finished: boolean; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, 'gc', '--repo', dir, '--engine', engine, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = afterMs === null ? null : setTimeout(() => child.kill('SIGKILL'), afterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal === 'SIGKILL') return resolve({ finished: false, stdout });
      if (code !== 0) return reject(new Error(`memgit gc exited with ${code}: ${stderr}`));
      resolve({ finished: true, stdout });
    });
  });
}

test('memgit gc killed with SIGKILL at random moments leaves a store that reopens whole, with both engines', async () => {
  await ensureBuilt();
  const dir = makeTempDir('memgit-gc-crash-');
  const random = mulberry32(20261204);
  const problems: string[] = [];
  let interrupted = 0;
  try {
    await write(dir, 0, 120);
    // How long a whole gc takes here, so that the kills land across it (process start included).
    const started = Date.now();
    const timed = await gcKilledAfter(dir, 'isomorphic-git', null);
    expect(JSON.parse(timed.stdout)).toMatchObject({ engine: 'isomorphic-git', upToDate: false });
    const span = Math.max(300, Date.now() - started);
    for (let round = 1; round <= KILLS; round++) {
      await write(dir, round, 30);
      const log = git(dir, 'log --format=%s');
      const files = headFiles(dir);
      const engine = round % 2 === 0 ? 'git' : 'isomorphic-git';
      const run = await gcKilledAfter(dir, engine, Math.floor(random() * span * 1.2));
      if (!run.finished) interrupted++;
      const where = `round ${round} (${engine}, ${run.finished ? 'finished' : 'killed'})`;
      // Reopening repairs whatever the kill left, and the store takes the next write.
      const store = await MemoryStore.open(dir, { log: () => undefined, autoGcLooseObjects: 0, flags: false });
      const next = await store.execute(toolUse(`toolu_after_${round}`, { command: 'view', path: '/memories' }), { session: 'sess_check' });
      if (next.is_error) problems.push(`${where}: view after the kill failed: ${next.content}`);
      await store.close();
      const fsck = spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
      if (fsck.status !== 0 || fsck.stdout.trim() !== '' || fsck.stderr.trim() !== '') problems.push(`${where}: fsck ${fsck.status} ${fsck.stdout}${fsck.stderr}`);
      if (git(dir, 'log --format=%s') !== log) problems.push(`${where}: the log changed`);
      const after = headFiles(dir);
      if (after.size !== files.size || [...files].some(([file, bytes]) => !after.get(file)?.equals(bytes))) problems.push(`${where}: files at HEAD changed`);
      if (git(dir, 'status --porcelain') !== '') problems.push(`${where}: git status not clean`);
    }
    // A git orphaned by a kill may still be writing its pack: the last, unkilled gc packs everything.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const last = await gcKilledAfter(dir, 'git', null);
    expect(JSON.parse(last.stdout)).toMatchObject({ engine: 'git' });
    const counts = git(dir, 'count-objects -v');
    expect(counts).toMatch(/^count: 0$/m);
    expect(counts).toMatch(/^packs: 1$/m);
    expect(git(dir, 'fsck --full --strict --no-dangling 2>&1')).toBe('');
  } finally {
    removeDir(dir);
  }
  expect(problems).toEqual([]);
  // The kills did interrupt gc (the rest let it finish: both outcomes are checked above).
  expect(interrupted).toBeGreaterThan(2);
}, 240_000);
