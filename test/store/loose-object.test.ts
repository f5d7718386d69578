/**
 * Loose objects encoded by memgit (node:crypto + node:zlib, src/store/loose-object.ts) are exactly what
 * isomorphic-git and git write for the same content, read back through isomorphic-git, and pass
 * `git fsck --full --strict`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { DurableFs } from '../../src/store/durable-fs';
import { commitContent, encodeLoose, treeContent } from '../../src/store/loose-object';
import { ObjectStore, TreeEntry } from '../../src/store/objects';
import { makeTempDir, removeDir } from './git-helpers';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

function newRepo(): { dir: string; gitdir: string } {
  const dir = makeTempDir('memgit-loose-');
  dirs.push(dir);
  const init = spawnSync('git', ['init', '-q', dir]);
  expect(init.status).toBe(0);
  return { dir, gitdir: path.join(dir, '.git') };
}

function gitIn(dir: string, ...args: string[]) {
  return spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
}

const NAMES = ['a.md', 'b', 'b.md', 'b-c', 'B', 'zeta', 'ünïcödé.md', 'space name.md', 'x.y.z', '100%.md', 'a', 'ab'];

test('blobs, trees and commits: same ids as isomorphic-git and git, readable, fsck-clean', async () => {
  const mine = newRepo();
  const theirs = newRepo();
  const durable = new DurableFs({ fsync: true });
  const objects = new ObjectStore(durable, mine.gitdir);
  const args = { fs, gitdir: theirs.gitdir };
  let seed = 11;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  let parent: string[] = [];
  for (let round = 0; round < 25; round++) {
    // A blob, a subtree and a root tree with a random mix of file and directory names (a directory named
    // like a file's prefix tests git's "name/" ordering).
    const content = Buffer.from(`round ${round}\n${'x'.repeat(Math.floor(rand() * 300))}\r\n\u0000binary\u00ff`, 'utf8');
    const blob = await objects.writeBlob(content);
    expect(blob).toBe(await git.writeBlob({ ...args, blob: content }));
    expect(blob).toBe(spawnSync('git', ['hash-object', '--stdin'], { cwd: mine.dir, input: content, encoding: 'utf8' }).stdout.trim());
    const names = NAMES.filter(() => rand() < 0.6);
    if (!names.length) names.push('only.md');
    const sub = await objects.writeTree([{ mode: '100644', path: 'leaf.md', oid: blob, type: 'blob' }]);
    expect(sub).toBe(await git.writeTree({ ...args, tree: [{ mode: '100644', path: 'leaf.md', oid: blob, type: 'blob' }] }));
    const entries: TreeEntry[] = names.map((name, k) =>
      k % 3 === 0 ? { mode: '040000', path: name, oid: sub, type: 'tree' } : { mode: '100644', path: name, oid: blob, type: 'blob' },
    );
    const shuffled = [...entries].sort(() => rand() - 0.5);
    const root = await objects.writeTree(shuffled);
    expect(root).toBe(await git.writeTree({ ...args, tree: shuffled }));
    const person = { name: 'memgit', email: 'memgit@localhost', timestamp: 1_750_000_000 + round, timezoneOffset: round % 2 ? -120 : 0 };
    const message = round % 4 === 0 ? `\n\ntoolu_${round}\n\nMemory-Command: create\r\n\n\n` : `toolu_${round}\n`;
    const commit = await objects.writeCommit({ tree: root, parent, author: person, committer: person, message });
    expect(commit).toBe(await git.writeCommit({ ...args, commit: { tree: root, parent, author: person, committer: person, message } }));
    await durable.flush();
    // Read back through isomorphic-git (a fresh cache: from disk, not from memory).
    const fresh = new ObjectStore(new DurableFs({ fsync: false }), mine.gitdir);
    expect(Buffer.from(await fresh.readBlob(blob)).equals(content)).toBe(true);
    expect((await fresh.readTree(root)).map((e) => e.path).sort()).toEqual([...names].sort());
    expect((await fresh.readCommit(commit)).commit.tree).toBe(root);
    parent = [commit];
  }
  fs.writeFileSync(path.join(mine.gitdir, 'refs', 'heads', 'main'), `${parent[0]}\n`);
  fs.writeFileSync(path.join(mine.gitdir, 'HEAD'), 'ref: refs/heads/main\n');
  const fsck = gitIn(mine.dir, 'fsck', '--full', '--strict');
  expect({ status: fsck.status, out: fsck.stdout + fsck.stderr }).toEqual({ status: 0, out: '' });
  // git itself names the blobs the same.
  const probe = path.join(mine.dir, 'probe.bin');
  const bytes = Buffer.from('probe\n\u0000\u00ff');
  fs.writeFileSync(probe, bytes);
  expect(gitIn(mine.dir, 'hash-object', probe).stdout.trim()).toBe(encodeLoose('blob', bytes).oid);
});

test('names git refuses in a tree are refused before anything is written', () => {
  const oid = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
  for (const name of ['', '.', '..', '.git', '.GIT', '.git.', 'git~1', 'a/b', 'a\\b', 'nul\0byte']) {
    expect(() => treeContent([{ mode: '100644', path: name, oid, type: 'blob' }])).toThrow(/unsafe tree entry name/);
  }
  expect(() => treeContent([{ mode: '100644', path: 'a', oid: 'nothex', type: 'blob' }])).toThrow(/bad object id/);
  expect(() => treeContent([{ mode: '100644', path: 'a', oid, type: 'blob' }, { mode: '100644', path: 'a', oid, type: 'blob' }])).toThrow(/duplicate/);
  const person = { name: 'x <evil>', email: 'e', timestamp: 1, timezoneOffset: 0 };
  expect(() => commitContent({ tree: oid, parent: [], author: person, committer: person, message: 'm' })).toThrow(/unsafe author/);
});
