/**
 * Packs read by position and compact pack id tables (src/store/pack-by-position.ts, pack-offsets.ts): the
 * table answers as the Map isomorphic-git built, and every object of a store that the real git CLI packed
 * with deep delta chains reads back as `git cat-file` gives it — without the pack ever being read whole.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { MemoryStore } from '../../src/store/memory-store';
import { PACK_WINDOW_BYTES, packReadCounts, PackByPosition } from '../../src/store/pack-by-position';
import { CompactPackOffsets } from '../../src/store/pack-offsets';
import { mulberry32 } from '../support/random';
import { gitObjects, mixedWorkload, QUIET, toolUse, useTempDir } from './git-helpers';

const tempDir = useTempDir();

function runGit(dir: string, args: string[], input?: string): Buffer {
  const run = spawnSync('git', args, { cwd: dir, input, maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

describe('CompactPackOffsets', () => {
  const random = mulberry32(31);
  const randomOid = () => Array.from({ length: 40 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');

  it('answers get, has, size and iteration as the Map it was made from', () => {
    const ids = new Set<string>(['0'.repeat(40), 'f'.repeat(40), `00${'f'.repeat(38)}`, `ff${'0'.repeat(38)}`]);
    while (ids.size < 3000) ids.add(randomOid());
    const sorted = [...ids].sort();
    // The order a .idx lists them in, and a shuffled one (sorted on the way in).
    for (const order of [sorted, [...sorted].sort(() => random() - 0.5)]) {
      const map = new Map(order.map((oid, i) => [oid, i === 0 ? 0xffffffff : Math.floor(random() * 0xffffffff)]));
      const compact = CompactPackOffsets.from(map)!;
      expect(compact).not.toBeNull();
      expect(compact.size).toBe(map.size);
      for (const [oid, offset] of map) {
        expect(compact.get(oid)).toBe(offset);
        expect(compact.has(oid)).toBe(true);
      }
      expect([...compact.keys()]).toEqual(sorted);
      expect([...compact.entries()]).toEqual(sorted.map((oid) => [oid, map.get(oid)]));
      expect([...compact]).toEqual([...compact.entries()]);
      expect([...compact.values()]).toEqual(sorted.map((oid) => map.get(oid)));
      const seen: Array<[string, number]> = [];
      compact.forEach((offset, oid) => seen.push([oid, offset]));
      expect(seen).toEqual([...compact.entries()]);
      expect(compact.idList()).toEqual(sorted);
      expect([...compact.sortedOffsets()]).toEqual([...map.values()].sort((a, b) => a - b));
      // Not in the table: other ids, ids spelled otherwise (the Map is keyed by lowercase hex), non-ids.
      for (let i = 0; i < 500; i++) {
        const other = randomOid();
        expect(compact.get(other)).toBe(map.get(other));
        expect(compact.has(other)).toBe(map.has(other));
      }
      const present = sorted[1234];
      for (const absent of [present.toUpperCase(), present.slice(0, 39), `${present}0`, '', 'zz'.repeat(20), 42, null, undefined]) {
        expect(compact.get(absent as string)).toBeUndefined();
        expect(compact.has(absent as string)).toBe(false);
      }
      // The last lookup is remembered: the same answer again, and a different one for the next id.
      expect(compact.get(present)).toBe(map.get(present));
      expect(compact.get(present)).toBe(map.get(present));
      expect(compact.get(sorted[7])).toBe(map.get(sorted[7]));
    }
  });

  it('declines a table that is not a pack index (the Map is kept)', () => {
    expect(CompactPackOffsets.from(new Map([['A'.repeat(40), 1]]))).toBeNull();
    expect(CompactPackOffsets.from(new Map([['a'.repeat(40), -1]]))).toBeNull();
    expect(CompactPackOffsets.from(new Map([['a'.repeat(40), 2 ** 32]]))).toBeNull();
    expect(CompactPackOffsets.from(new Map([['a'.repeat(40), 1.5]]))).toBeNull();
    expect(CompactPackOffsets.from(new Map([[7, 1]]))).toBeNull();
    expect(CompactPackOffsets.from(new Map())!.size).toBe(0);
  });
});

/** A store of `calls` mixed calls (and what `more` writes after them), packed by the git CLI: its folder. */
async function gitPackedStore(calls: number, repackArgs: string[] = [], more?: (store: MemoryStore) => Promise<void>): Promise<string> {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, QUIET);
  await mixedWorkload(store, calls);
  await more?.(store);
  await store.close();
  runGit(dir, ['repack', '-a', '-d', ...repackArgs, '-q']);
  runGit(dir, ['prune-packed']);
  return dir;
}

/** What the pack indexes isomorphic-git loaded through `cache` hold, as it holds them. */
async function loadedPackIndexes(cache: object): Promise<Array<{ offsets: unknown; pack?: unknown; hashes?: unknown }>> {
  const found = [];
  for (const key of Object.getOwnPropertySymbols(cache)) {
    const value = (cache as Record<symbol, unknown>)[key];
    if (value instanceof Map) for (const loading of value.values()) found.push(await loading);
  }
  return found;
}

test('a store packed by git with deep delta chains reads back object for object, its pack read by position and never whole', async () => {
  const dir = await gitPackedStore(120, ['-f', '--depth=50', '--window=250']);
  const packDir = path.join(dir, '.git', 'objects', 'pack');
  const packFile = path.join(packDir, fs.readdirSync(packDir).find((f) => f.endsWith('.pack'))!);
  const objects = gitObjects(dir);
  expect(objects.length).toBeGreaterThan(300);

  const before = { ...packReadCounts };
  const reopened = await MemoryStore.open(dir, QUIET);
  try {
    const { gitCache } = reopened.objects;
    const gitFs = reopened.objects.fs.gitFs;
    for (const object of objects) {
      const read = await git.readObject({ fs: gitFs, gitdir: path.join(dir, '.git'), cache: gitCache, oid: object.oid, format: 'content' });
      expect({ oid: object.oid, type: read.type, content: Buffer.from(read.object as Uint8Array).equals(object.content) }).toEqual({ oid: object.oid, type: object.type, content: true });
    }
    const [index, ...others] = await loadedPackIndexes(gitCache);
    expect(others).toHaveLength(0);
    expect(index.offsets).toBeInstanceOf(CompactPackOffsets);
    expect((index.offsets as CompactPackOffsets).size).toBe(objects.length);
    expect((index.hashes as string[]).length).toBe(objects.length); // made on demand, as isomorphic-git had it
    const pack = (await index.pack) as PackByPosition;
    expect(Buffer.isBuffer(pack)).toBe(false);
    expect(pack.length).toBe(fs.statSync(packFile).size);
    expect(packReadCounts.wholeReads).toBe(before.wholeReads);
    expect(packReadCounts.slices).toBeGreaterThan(before.slices);
    expect(packReadCounts.windows).toBeGreaterThan(before.windows);

    // What isomorphic-git asks of a pack, against the file itself: one object from its start (up to the
    // next one), any range, the trailing checksum.
    const whole = fs.readFileSync(packFile);
    const starts = [...(index.offsets as CompactPackOffsets).sortedOffsets()];
    starts.forEach((start, i) => {
      expect(pack.slice(start).equals(whole.subarray(start, i + 1 < starts.length ? starts[i + 1] : whole.length - 20))).toBe(true);
    });
    expect(pack.subarray(-20).equals(whole.subarray(-20))).toBe(true);
    expect(pack.slice(-20).equals(whole.subarray(-20))).toBe(true);
    expect(pack.subarray(100, 400_000).equals(whole.subarray(100, 400_000))).toBe(true);
    expect(pack.subarray(0, pack.length - 20).equals(whole.subarray(0, -20))).toBe(true);
    expect(packReadCounts.wholeReads).toBe(before.wholeReads);

    // Asked for anything else, it is the whole file (a later isomorphic-git loses the saving, not the read).
    expect((pack as unknown as Buffer).readUInt32BE(0)).toBe(whole.readUInt32BE(0));
    expect((pack as unknown as Buffer).toString('latin1', 0, 4)).toBe('PACK');
    expect(packReadCounts.wholeReads).toBe(before.wholeReads + 1);
  } finally {
    await reopened.close();
  }
});

test('a pack replaced by another process (gc) after it was loaded: the next read finds the new pack', async () => {
  // Files that do not compress, so that the pack spans many of the windows it is read through.
  const dir = await gitPackedStore(40, [], async (writer) => {
    const random = mulberry32(7);
    for (let i = 0; i < 8; i++) {
      const text = Array.from({ length: 20_000 }, () => Math.floor(random() * 2 ** 52).toString(36)).join(' ');
      await writer.execute(toolUse(`toolu_large_${i}`, { command: 'create', path: `/memories/large-${i}.md`, file_text: text }), { session: 's' });
    }
  });
  const blobs = gitObjects(dir).filter((o) => o.type === 'blob');
  const gitdir = path.join(dir, '.git');
  const packDir = path.join(gitdir, 'objects', 'pack');
  const first = fs.readdirSync(packDir).filter((f) => f.endsWith('.pack'));
  expect(fs.statSync(path.join(packDir, first[0])).size).toBeGreaterThan(4 * PACK_WINDOW_BYTES);

  const store = await MemoryStore.open(dir, QUIET);
  try {
    // Loaded (its index, a window) through the store's own reads, which cache the pack folder's listing.
    expect(Buffer.from(await store.objects.readBlob(blobs[0].oid)).equals(blobs[0].content)).toBe(true);
    const [index] = await loadedPackIndexes(store.objects.gitCache);
    expect(Buffer.isBuffer(await index.pack)).toBe(false);

    // Another pack of the same objects (other delta choices: another name), and the first one removed.
    runGit(dir, ['repack', '-a', '-d', '-f', '--depth=3', '--window=5', '-q']);
    const second = fs.readdirSync(packDir).filter((f) => f.endsWith('.pack'));
    expect(second).toHaveLength(1);
    expect(second).not.toEqual(first);
    const windows = packReadCounts.windows;
    for (const blob of blobs) expect({ oid: blob.oid, same: Buffer.from(await store.objects.readBlob(blob.oid)).equals(blob.content) }).toEqual({ oid: blob.oid, same: true });
    expect(packReadCounts.windows).toBeGreaterThan(windows); // read from disk after the first pack was gone
    const result = await store.execute(toolUse('toolu_after_repack', { command: 'view', path: '/memories/large-7.md' }), { session: 's' });
    expect(result.is_error).toBeFalsy();
  } finally {
    await store.close();
  }
});

test('a read of the pack that fails while its checksum is checked fails that read only: the next one checks again', async () => {
  const dir = await gitPackedStore(30);
  const blobs = gitObjects(dir).filter((o) => o.type === 'blob');
  const store = await MemoryStore.open(dir, QUIET);
  const gitdir = path.join(dir, '.git');
  const read = (oid: string) => git.readObject({ fs: store.objects.fs.gitFs, gitdir, cache: store.objects.gitCache, oid, format: 'content' });
  // node's fs module itself (the store's `import * as` reads through to it), not this file's namespace view.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nodeFs = require('node:fs') as { openSync: typeof fs.openSync };
  const openSync = nodeFs.openSync;
  let failures = 0;
  try {
    // The checksum is the first thing read from the pack: fail that one open, as an I/O error would.
    nodeFs.openSync = ((file: fs.PathLike, ...rest: unknown[]) => {
      if (String(file).endsWith('.pack') && failures === 0) {
        failures++;
        throw Object.assign(new Error(`EIO: i/o error, open '${String(file)}'`), { code: 'EIO' });
      }
      return (openSync as (...args: unknown[]) => number)(file, ...rest);
    }) as typeof fs.openSync;
    await expect(read(blobs[0].oid)).rejects.toThrow(/EIO/);
    expect(failures).toBe(1);
    // Not remembered: the next read checks the pack again, and reads.
    expect(Buffer.from((await read(blobs[0].oid)).object as Uint8Array).equals(blobs[0].content)).toBe(true);
    const [index] = await loadedPackIndexes(store.objects.gitCache);
    expect(Buffer.isBuffer(await index.pack)).toBe(false);
    for (const blob of blobs) expect(Buffer.from(await store.objects.readBlob(blob.oid)).equals(blob.content)).toBe(true);
  } finally {
    nodeFs.openSync = openSync;
    await store.close();
  }
});
