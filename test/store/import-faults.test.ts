/**
 * `memgit import` with one commit per file is all or nothing: a fault at any fs call under the store
 * (each distinct call of a fault-free import fails once, EIO or ENOSPC) leaves either every file
 * imported, one commit each, or nothing — HEAD, `git log`, the working tree and the history index as
 * before — and `git fsck --full` is clean either way. An import that failed says whether HEAD is where it
 * was. The state is checked with the real git CLI, after the store is reopened (which repairs a write
 * whose bookkeeping failed after its commit landed).
 */
import { Call, FaultCode, injector, underFault } from './fault-injector';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { ImportFailedError, importMemoryDir, ImportReport } from '../../src/store/import';
import { makeTempDir, removeDir, toolUse, workingTreeFiles } from './git-helpers';

jest.setTimeout(30 * 60_000); // not a threshold: a few hundred points, slow on a loaded 2-core box

const quiet = { log: () => undefined, flags: false, replicate: false } as const;
const IMPORTED = ['/memories/a.md', '/memories/b/one.md', '/memories/b/two.md', '/memories/c.md'];
const TITLES = IMPORTED.map((p) => `import ${p}`).reverse();
const options = { operator: 'ops_ann', maxFileBytes: 1 << 20 };

let base: string;
let source: string;
let seed: string;
let seedLog: string;
let seedHistory: string;

function sh(dir: string, script: string): string {
  return spawnSync('sh', ['-c', `cd "$1" || exit 99\n${script}`, 'sh', dir], { encoding: 'utf8' }).stdout;
}

/** HEAD, `git log` subjects, fsck (dangling objects aside: a failed write may leave unreferenced ones) and status. */
function inspect(dir: string): { head: string; log: string; fsck: string; status: string } {
  const [head, log, fsck, status] = sh(
    dir,
    [
      'git rev-parse HEAD 2>&1',
      `printf '\\035'`,
      'git log --format=%s 2>&1',
      `printf '\\035'`,
      'git fsck --full 2>&1 | grep -v "^dangling "',
      `printf '\\035'`,
      'git status --porcelain 2>&1',
    ].join('\n'),
  ).split('\x1d');
  return { head: head.trim(), log: log.trim(), fsck, status };
}

beforeAll(async () => {
  jest.spyOn(console, 'log').mockImplementation(() => undefined); // isomorphic-git logs rethrown fs errors
  base = makeTempDir('memgit-import-faults-');
  injector.syncFreeRoot = base;
  source = path.join(base, 'sdk', 'memories');
  fs.mkdirSync(path.join(source, 'b'), { recursive: true });
  fs.writeFileSync(path.join(source, 'a.md'), 'alpha\n');
  fs.writeFileSync(path.join(source, 'b', 'one.md'), 'one\n');
  fs.writeFileSync(path.join(source, 'b', 'two.md'), 'two\n');
  fs.writeFileSync(path.join(source, 'c.md'), 'sea\n');
  seed = path.join(base, 'seed');
  const store = await MemoryStore.open(seed, quiet);
  const result = await store.execute(toolUse('toolu_seed', { command: 'create', path: '/memories/kept.md', file_text: 'kept\n' }), { session: 'sess_seed' });
  expect(result.is_error).toBeUndefined();
  await store.close();
  seedLog = inspect(seed).log;
  seedHistory = fs.readFileSync(path.join(seed, '.git', 'memgit', 'history-v2.jsonl'), 'utf8');
});

afterAll(() => {
  injector.syncFreeRoot = null;
  removeDir(base);
});

let copies = 0;
function freshCopy(): string {
  const dir = path.join(base, `point-${++copies}`);
  fs.cpSync(seed, dir, { recursive: true });
  return dir;
}

/** One point per distinct call (as in fault-sweep.test.ts): same phase, same kind of call, same kind of file. */
function distinctCalls(calls: Call[], dir: string): number[] {
  const seen = new Set<string>();
  const points: number[] = [];
  let phase = 0;
  calls.forEach((call, i) => {
    const rel = path.relative(dir, call.file);
    const shape = rel
      .replace(/objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/, 'objects/XX/OBJECT')
      .replace(/objects\/[0-9a-f]{2}(\/|$)/, 'objects/XX$1')
      .replace(/\.memgit-tmp-\d+-\d+$/, 'TEMP')
      .replace(/memories\/.*$/, 'memories/FILE');
    const signature = `${phase} ${call.name} ${shape} ${call.writes}`;
    if (!seen.has(signature)) {
      seen.add(signature);
      points.push(i + 1);
    }
    if (/transaction$/.test(rel) || (/refs\/heads\/main$/.test(rel) && call.name.startsWith('rename'))) phase++;
  });
  return points;
}

async function runPoint(failAt: number, code: FaultCode, tally: { applied: number; notApplied: number; failures: string[] }, seedHead: string): Promise<void> {
  const dir = freshCopy();
  const problems: string[] = [];
  let where = `${code} at call ${failAt}`;
  let store: MemoryStore | null = await MemoryStore.open(dir, quiet);
  try {
    const run = await underFault(dir, failAt, code, () => importMemoryDir(store!, source, options));
    where += ` (${run.failed?.name} ${run.failed ? path.relative(dir, run.failed.file) : '-'})`;
    await store.close();
    // Reopen: a write whose commit landed but whose bookkeeping failed is repaired here.
    store = await MemoryStore.open(dir, quiet);
    await store.close();
    store = null;
    const after = inspect(dir);
    if (after.fsck !== '') problems.push(`fsck: ${after.fsck}`);
    if (after.status !== '') problems.push(`status: ${after.status}`);
    if (after.head === seedHead) {
      tally.notApplied++;
      if (run.error === undefined) problems.push('nothing imported, yet the import reported success');
      else if (!(run.error instanceof ImportFailedError) || !/^the import failed (before writing anything )?\(.*\); nothing was imported( \(HEAD is still [0-9a-f]{12}\))?$/.test(run.error.message)) {
        problems.push(`the failure said ${(run.error as Error).message}`);
      }
      if (after.log !== seedLog) problems.push(`log changed: ${after.log}`);
      if ([...workingTreeFiles(dir).keys()].some((f) => !/kept\.md$/.test(f))) problems.push('files in the working tree');
      const history = fs.readFileSync(path.join(dir, '.git', 'memgit', 'history-v2.jsonl'), 'utf8');
      if (history !== seedHistory) problems.push('the history index changed');
    } else {
      tally.applied++;
      if (after.log !== [...TITLES, seedLog].join('\n')) problems.push(`partly imported? log: ${after.log.split('\n').join(', ')}`);
      const report = run.value as ImportReport | undefined;
      if (run.error !== undefined) problems.push(`applied, yet the import threw ${(run.error as Error).message}`);
      else if (report?.commits[report.commits.length - 1] !== after.head) problems.push('the report does not name HEAD');
      for (const p of IMPORTED) {
        const shown = sh(dir, `git show HEAD:${p.slice(1)}`);
        if (shown !== fs.readFileSync(path.join(source, p.slice('/memories/'.length)), 'utf8')) problems.push(`${p} holds ${JSON.stringify(shown)}`);
      }
    }
  } catch (error) {
    problems.push(`${(error as Error).stack}`);
  } finally {
    await store?.close().catch(() => undefined);
    removeDir(dir);
  }
  if (problems.length) tally.failures.push(`${where}: ${problems.join('; ')}`);
}

test('a fault at any fs call of an import leaves every file imported or nothing, and fsck clean', async () => {
  const seedHead = inspect(seed).head;
  // The fault-free run: one commit per file, oldest first, on top of the seed.
  const dir = freshCopy();
  const store = await MemoryStore.open(dir, quiet);
  const clean = await underFault(dir, 0, 'EIO', () => importMemoryDir(store, source, options));
  await store.close();
  expect(clean.error).toBeUndefined();
  expect(clean.value!.commits).toHaveLength(IMPORTED.length);
  expect(inspect(dir).log).toBe([...TITLES, seedLog].join('\n'));
  removeDir(dir);

  const points = distinctCalls(clean.calls, dir);
  expect(points.length).toBeGreaterThan(10);
  const tally = { applied: 0, notApplied: 0, failures: [] as string[] };
  for (const k of points) {
    const call = clean.calls[k - 1];
    const allocates = call.writes && (call.bytes > 0 || /mkdir|open/i.test(call.name));
    await runPoint(k, allocates ? 'ENOSPC' : 'EIO', tally, seedHead);
  }
  expect(injector.root).toBeNull();
  expect(tally.failures).toEqual([]);
  // Both outcomes happen: faults before the branch moves import nothing, faults after it everything.
  expect(tally.notApplied).toBeGreaterThan(0);
  expect(tally.applied).toBeGreaterThan(0);
});
