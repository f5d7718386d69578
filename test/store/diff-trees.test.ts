/**
 * diffTrees (objects.ts) sorts only the names that differ between two trees; this checks it against the
 * plain definition — every name of both trees, sorted, the equal ones skipped — on random trees written
 * raw by the real git CLI, hostile ones included: entries out of git's order, the same name twice, a name
 * that is a file on one side and a folder on the other, submodule entries, nested folders.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { DurableFs } from '../../src/store/durable-fs';
import { diffTrees, FileChange, ObjectStore } from '../../src/store/objects';
import { useTempDir } from './git-helpers';
import { mulberry32 as random } from '../support/random';

const tempDir = useTempDir();

function git(dir: string, args: string[], input?: Buffer): string {
  const run = spawnSync('git', args, { cwd: dir, input, maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout.toString('utf8');
}

/** The definition diffTrees must keep (its code before it sorted only the differing names). */
async function referenceDiff(objects: ObjectStore, oldTree: string | null, newTree: string | null, prefix = ''): Promise<FileChange[]> {
  if (oldTree === newTree) return [];
  const oldEntries = new Map((oldTree ? await objects.readTree(oldTree) : []).map((e) => [e.path, e]));
  const newEntries = new Map((newTree ? await objects.readTree(newTree) : []).map((e) => [e.path, e]));
  const names = new Set([...oldEntries.keys(), ...newEntries.keys()]);
  const changes: FileChange[] = [];
  for (const name of [...names].sort()) {
    const before = oldEntries.get(name) ?? null;
    const after = newEntries.get(name) ?? null;
    if (before && after && before.oid === after.oid && before.type === after.type) continue;
    const full = prefix ? `${prefix}/${name}` : name;
    const beforeTree = before?.type === 'tree' ? before.oid : null;
    const afterTree = after?.type === 'tree' ? after.oid : null;
    if (beforeTree || afterTree) changes.push(...(await referenceDiff(objects, beforeTree, afterTree, full)));
    const beforeBlob = before && before.type !== 'tree' ? before.oid : null;
    const afterBlob = after && after.type !== 'tree' ? after.oid : null;
    if (beforeBlob !== afterBlob) changes.push({ path: full, oldOid: beforeBlob, newOid: afterBlob });
  }
  return changes;
}


test('diffTrees gives what diffing every name gives, on random and hostile trees', async () => {
  const dir = tempDir();
  git(dir, ['init', '-q']);
  const gitdir = path.join(dir, '.git');
  const next = random(12);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const blobs = Array.from({ length: 6 }, (_, k) => git(dir, ['hash-object', '-w', '--stdin'], Buffer.from(`blob ${k}\n`)).trim());
  const names = ['a', 'b', 'a.md', 'a-b', 'é', 'Z', 'dir', 'x y'];
  const writeTree = (entries: Array<{ mode: string; name: string; oid: string }>): string => {
    const content = Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex')]));
    return git(dir, ['hash-object', '-w', '-t', 'tree', '--literally', '--stdin'], content).trim();
  };
  const randomTree = (depth: number): string => {
    const entries: Array<{ mode: string; name: string; oid: string }> = [];
    const count = Math.floor(next() * 6);
    for (let k = 0; k < count; k++) {
      const roll = next();
      const name = pick(names);
      if (roll < 0.2 && depth > 0) entries.push({ mode: '40000', name, oid: randomTree(depth - 1) });
      else if (roll < 0.25) entries.push({ mode: '160000', name, oid: blobs[0] }); // a submodule entry (a commit id)
      else entries.push({ mode: pick(['100644', '100755']), name, oid: pick(blobs) });
    }
    if (next() < 0.5) entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0)); // else: hostile order, duplicates kept
    return writeTree(entries);
  };
  const trees = Array.from({ length: 40 }, () => randomTree(2));
  // Pairs that differ by a little, as consecutive commits do: the same tree with one entry changed.
  const objects = new ObjectStore(new DurableFs({ fsync: false }), gitdir);
  const outcome = async (diff: () => Promise<FileChange[]>) => diff().then((changes) => ({ changes }), (error: Error) => ({ error: error.message }));
  let compared = 0;
  let withChanges = 0;
  for (let k = 0; k < 300; k++) {
    const a = next() < 0.1 ? null : pick(trees);
    const b = next() < 0.1 ? null : pick(trees);
    const expected = await outcome(() => referenceDiff(objects, a, b));
    expect({ a, b, ...(await outcome(() => diffTrees(objects, a, b))) }).toEqual({ a, b, ...expected });
    compared++;
    if ('changes' in expected && expected.changes.length) withChanges++;
  }
  expect(compared).toBe(300);
  expect(withChanges).toBeGreaterThan(100);
});
