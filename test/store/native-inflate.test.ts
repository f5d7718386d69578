/**
 * isomorphic-git's reads inflate with node:zlib (src/store/native-inflate.ts): the store installs it into the
 * pako isomorphic-git loads, with pako's contract — same bytes, data after the stream ignored, corrupt data
 * thrown as a string (isomorphic-git's DecompressionError) — and stores packed by git (deltas) and by memgit
 * read back byte for byte as git's own CLI reads them.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import { MemoryStore } from '../../src/store';
import { installNativeInflate, isomorphicGitPako } from '../../src/store/native-inflate';
import { mulberry32 } from '../support/random';
import { gitObjects, makeTempDir, removeDir } from './git-helpers';

const NATIVE = Symbol.for('memgit.native-inflate');
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) removeDir(dir);
  dirs = [];
});
const tempDir = () => {
  const dir = makeTempDir();
  dirs.push(dir);
  return dir;
};

test('the pako isomorphic-git loads inflates natively once the store is loaded', () => {
  const pako = isomorphicGitPako() as unknown as Record<string | symbol, unknown> & { inflate: Record<symbol, unknown> };
  expect(pako.inflate[NATIVE]).toBe(true);
});

test('same bytes as pako, trailing data ignored, options still served by pako, corrupt data thrown as a string', () => {
  // Installed on an exports object of our own, pako's module function kept for comparison.
  const reference = { inflate: referenceInflate };
  const patched = { inflate: referenceInflate };
  installNativeInflate(patched);
  installNativeInflate(patched); // idempotent
  expect(patched.inflate).not.toBe(referenceInflate);
  const random = mulberry32(31);
  for (let k = 0; k < 300; k++) {
    const size = Math.floor(random() * (k % 10 === 0 ? 200_000 : 2_000));
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = random() < 0.5 ? 97 + Math.floor(random() * 4) : Math.floor(random() * 256);
    const deflated = deflateSync(bytes, { level: k % 10 });
    const tail = Buffer.from(`rest of the pack ${k}`);
    const withTail = Buffer.concat([deflated, tail]);
    const expected = reference.inflate(deflated) as Uint8Array;
    expect(Buffer.from(patched.inflate(withTail) as Uint8Array).equals(Buffer.from(expected))).toBe(true);
    expect(Buffer.from(expected).equals(bytes)).toBe(true);
  }
  const text = deflateSync(Buffer.from('héllo'));
  expect(patched.inflate(text, { to: 'string' })).toBe('héllo');
  let thrown: unknown;
  try {
    patched.inflate(Buffer.from('not a zlib stream'));
  } catch (error) {
    thrown = error;
  }
  expect(typeof thrown).toBe('string');
  expect(thrown).toBe(catchString(() => referenceInflate(Buffer.from('not a zlib stream'))));
});

test('a corrupt loose object is still a DecompressionError from isomorphic-git', async () => {
  const dir = tempDir();
  execFileSync('git', ['init', '-q', dir]);
  const oid = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: 'some content\n', encoding: 'utf8' }).trim();
  const file = path.join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  const { blob } = await git.readBlob({ fs, dir, oid });
  expect(Buffer.from(blob).toString('utf8')).toBe('some content\n');
  fs.chmodSync(file, 0o644);
  fs.writeFileSync(file, Buffer.from('garbage, not zlib'));
  await expect(git.readBlob({ fs, dir, oid, cache: {} })).rejects.toMatchObject({ code: 'DecompressionError' });
});

test('stores packed by git (deltas) and by memgit gc read back as git reads them', async () => {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined, autoGcLooseObjects: 0 });
  const file = '/memories/notes.md';
  let text = Array.from({ length: 40 }, (_, k) => `line ${k}: something to remember`).join('\n') + '\n';
  await store.execute({ type: 'tool_use', id: 'toolu_inflate_0', name: 'memory', input: { command: 'create', path: file, file_text: text } }, { session: 'sess_inflate' });
  for (let k = 1; k < 40; k++) {
    const result = await store.execute({
      type: 'tool_use',
      id: `toolu_inflate_${k}`,
      name: 'memory',
      input: { command: 'str_replace', path: file, old_str: `line ${k}: something`, new_str: `line ${k}: edited ${k}` },
    }, { session: 'sess_inflate' });
    expect(result.is_error).toBeFalsy();
    text = text.replace(`line ${k}: something`, `line ${k}: edited ${k}`);
  }
  const blobsOf = () =>
    execFileSync('git', ['rev-list', '--objects', '--all'], { cwd: dir, encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[0]);
  for (const engine of ['isomorphic-git', 'git'] as const) {
    await store.gc({ full: true, engine });
    const oids = blobsOf();
    expect(oids.length).toBeGreaterThan(100);
    const reader = await MemoryStore.open(dir, { fsync: false, log: () => undefined, autoGcLooseObjects: 0 });
    try {
      for (const expected of gitObjects(dir, oids)) {
        const { type, object } = await git.readObject({ fs, dir, oid: expected.oid, format: 'content', cache: {} });
        expect({ oid: expected.oid, type, same: Buffer.from(object as Uint8Array).equals(expected.content) }).toEqual({ oid: expected.oid, type: expected.type, same: true });
      }
      expect(Buffer.from(await reader.objects.readBlob(headBlob(dir, 'memories/notes.md'))).toString('utf8')).toBe(text);
    } finally {
      await reader.close();
    }
  }
  execFileSync('git', ['fsck', '--full', '--strict'], { cwd: dir });
  await store.close();
}, 60_000);

function headBlob(dir: string, repoPath: string): string {
  return execFileSync('git', ['rev-parse', `HEAD:${repoPath}`], { cwd: dir, encoding: 'utf8' }).trim();
}

function referenceInflate(data: Uint8Array, options?: unknown): Uint8Array | string {
  // pako's own inflate, as shipped (the exports object's property was replaced, the module's function was not).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const inflateModule = require(require.resolve('pako/lib/inflate', { paths: [path.dirname(require.resolve('isomorphic-git'))] })) as {
    inflate: (data: Uint8Array, options?: unknown) => Uint8Array | string;
  };
  return inflateModule.inflate(data, options);
}

function catchString(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
