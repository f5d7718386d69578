/**
 * The files under `.git/memgit/` that README and docs name carry the version memgit writes today: a
 * reader looking for `history-v1.jsonl` on disk must find it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, QUIET, removeDir, toolUse } from './git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('memgit-layout-');
  const store = await MemoryStore.open(dir, QUIET);
  await store.execute(toolUse('toolu_l1', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_layout' });
  await store.close();
  // blame keeps its index too
  expect(spawnSync(process.execPath, [CLI_MAIN, 'blame', '/memories/a.md', '--repo', dir], { encoding: 'utf8' }).status).toBe(0);
});

afterAll(() => removeDir(dir));

test('every versioned file of .git/memgit/ the docs name is the one memgit writes', () => {
  const onDisk = fs.readdirSync(path.join(dir, '.git', 'memgit'));
  const kinds = new Set(onDisk.map((name) => /^([a-z]+)-v\d+/.exec(name)?.[1]).filter(Boolean));
  expect([...kinds]).toEqual(expect.arrayContaining(['history', 'calls', 'blame']));
  const docs = [path.join(REPO_ROOT, 'README.md'), ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(REPO_ROOT, 'docs', f))];
  const wrong: string[] = [];
  for (const file of docs) {
    for (const [name, versioned, kind] of fs.readFileSync(file, 'utf8').matchAll(/\b(([a-z]+)-v\d+)(?:-facts)?\.(?:jsonl|json|snapshot)\b/g)) {
      // The same kind and version on disk (some files of a version appear only in larger stores).
      if (kinds.has(kind) && !onDisk.some((f) => f.startsWith(`${versioned}.`) || f.startsWith(`${versioned}-`))) wrong.push(`${path.relative(REPO_ROOT, file)}: ${name}`);
    }
  }
  expect(wrong).toEqual([]);
});
