import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import type { DurableFs } from './durable-fs';
import type { ObjectStore } from './objects';
import { PackBuilder, PackObjectType, readIndexOids } from './pack';

/**
 * Packing ("memgit gc"): isomorphic-git writes one loose file per object and never packs, so a store
 * grows by ~16 KB of disk per call and every later read pays for loose files. This gathers the objects
 * reachable from the branches into one pack with deltas (pack.ts), makes the pack and its index durable,
 * and only then removes the loose copies and the packs it made redundant. The caller holds the write
 * lock, so no commit is written meanwhile; readers in other processes fall back from a removed loose
 * object to the packs, which are listed anew on every miss.
 *
 * `full` repacks everything into one pack (the old packs are removed when the new one holds all of their
 * objects): `memgit gc`. Otherwise only objects not yet in a pack are packed, with deltas among
 * themselves — quick whatever the size of the history, so this is what runs automatically every few
 * thousand calls (holding the write lock for a few seconds); a full repack is the operator's call.
 */

export interface GcOptions {
  full?: boolean;
  onProgress?: (message: string) => void;
}

export interface GcReport {
  packedObjects: number;
  packBytes: number;
  looseRemoved: number;
  packsRemoved: number;
  full: boolean;
}

export async function repack(objects: ObjectStore, durableFs: DurableFs, gitdir: string, options: GcOptions = {}): Promise<GcReport> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  const existingPacks = await listPacks(packDir);
  const full = options.full === true;
  const alreadyPacked = new Set<string>();
  if (!full) {
    for (const pack of existingPacks) for (const oid of await packOids(pack)) alreadyPacked.add(oid);
  }
  const progress = options.onProgress ?? (() => undefined);
  let lastYield = Date.now();
  const read = async (oid: string) => {
    // Packing is CPU-bound: let timers run (the write lock refreshes its mtime on one) every 50 ms.
    if (Date.now() - lastYield > 50) {
      await new Promise((resolve) => setImmediate(resolve));
      lastYield = Date.now();
    }
    const fast = objects.readRaw(oid);
    if (fast) return { type: fast.type as PackObjectType, body: fast.body };
    const { type, object } = await git.readObject({ fs: durableFs.gitFs, gitdir, oid, format: 'content', cache: objects.gitCache });
    return { type: type as PackObjectType, body: Buffer.from(object as Uint8Array) };
  };

  // Commits, oldest first: first-parent chains from each branch tip, other parents after.
  const tips = await branchTips(durableFs, gitdir);
  const seenCommits = new Set<string>();
  const chains: Array<Array<{ oid: string; tree: string; body: Buffer }>> = [];
  const todo = [...tips];
  while (todo.length) {
    const chain: Array<{ oid: string; tree: string; body: Buffer }> = [];
    let cursor: string | undefined = todo.pop();
    while (cursor && !seenCommits.has(cursor) && !alreadyPacked.has(cursor)) {
      seenCommits.add(cursor);
      const { body } = await read(cursor);
      const { tree, parents } = parseCommit(body);
      chain.push({ oid: cursor, tree, body });
      todo.push(...parents.slice(1));
      cursor = parents[0];
      if (seenCommits.size % 5000 === 0) progress(`gc: read ${seenCommits.size} commits`);
    }
    chains.push(chain.reverse());
  }
  const commits = chains.flat();

  const builder = new PackBuilder();
  for (const [i, commit] of commits.entries()) {
    builder.add(commit.oid, 'commit', commit.body, 'commit');
    const trees: Array<[oid: string, at: string]> = [[commit.tree, '']];
    while (trees.length) {
      const [oid, at] = trees.pop()!;
      if (builder.has(oid) || alreadyPacked.has(oid)) continue;
      const { body } = await read(oid);
      builder.add(oid, 'tree', body, `tree:${at}`);
      for (const entry of parseTree(body)) {
        const child = at ? `${at}/${entry.name}` : entry.name;
        if (entry.mode === '40000') trees.push([entry.oid, child]);
        else if (entry.mode !== '160000' && !builder.has(entry.oid) && !alreadyPacked.has(entry.oid)) {
          builder.add(entry.oid, 'blob', (await read(entry.oid)).body, `blob:${child}`);
        }
      }
    }
    if ((i + 1) % 5000 === 0) progress(`gc: packed ${i + 1} of ${commits.length} commits`);
  }
  if (builder.count === 0) return { packedObjects: 0, packBytes: 0, looseRemoved: 0, packsRemoved: 0, full };

  const { pack, idx, checksum } = builder.finish();
  const base = path.join(packDir, `pack-${checksum}`);
  await fs.promises.mkdir(packDir, { recursive: true });
  // The .pack before its .idx (readers find packs by their index), both durable before anything goes.
  await durableFs.writeFile(`${base}.pack`, pack, { mode: 0o444 });
  await durableFs.writeFile(`${base}.idx`, idx, { mode: 0o444 });
  await durableFs.flush();
  const packed = new Set(readIndexOids(idx));

  let looseRemoved = 0;
  for (const oid of packed) {
    try {
      await fs.promises.unlink(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
      looseRemoved++;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  await removeEmptyFanoutDirs(path.join(gitdir, 'objects'));
  let packsRemoved = 0;
  if (full) {
    for (const old of existingPacks) {
      if (old === base) continue;
      // Only a pack whose every object is in the new one (unreachable objects stay where they are).
      if (!(await packOids(old)).every((oid) => packed.has(oid))) continue;
      for (const ext of ['.idx', '.pack', '.rev', '.bitmap']) await fs.promises.rm(`${old}${ext}`, { force: true });
      packsRemoved++;
    }
  }
  // isomorphic-git caches the list of packs and their indexes: forget them.
  for (const key of Reflect.ownKeys(objects.gitCache)) delete (objects.gitCache as Record<PropertyKey, unknown>)[key];
  progress(`gc: ${packed.size} objects in ${path.basename(base)}.pack (${pack.length} bytes), ${looseRemoved} loose removed, ${packsRemoved} old pack(s) removed`);
  return { packedObjects: packed.size, packBytes: pack.length, looseRemoved, packsRemoved, full };
}

/** Loose objects, estimated like git's gc.auto: one fan-out directory counted, times 256. */
export async function estimateLooseObjects(gitdir: string): Promise<number> {
  const names = await fs.promises.readdir(path.join(gitdir, 'objects', '17')).catch(() => []);
  return names.filter((name) => /^[0-9a-f]{38}$/.test(name)).length * 256;
}

async function branchTips(durableFs: DurableFs, gitdir: string): Promise<string[]> {
  const tips = new Set<string>();
  for (const branch of await git.listBranches({ fs: durableFs.gitFs, gitdir })) {
    tips.add(await git.resolveRef({ fs: durableFs.gitFs, gitdir, ref: `refs/heads/${branch}` }));
  }
  tips.add(await git.resolveRef({ fs: durableFs.gitFs, gitdir, ref: 'HEAD' }));
  return [...tips];
}

/** Existing packs, as paths without extension. */
async function listPacks(packDir: string): Promise<string[]> {
  const names = await fs.promises.readdir(packDir).catch(() => [] as string[]);
  return names.filter((n) => /^pack-[0-9a-f]{40}\.idx$/.test(n)).map((n) => path.join(packDir, n.slice(0, -4)));
}

async function packOids(packBase: string): Promise<string[]> {
  return readIndexOids(await fs.promises.readFile(`${packBase}.idx`));
}

function parseCommit(body: Buffer): { tree: string; parents: string[] } {
  const text = body.toString('latin1', 0, Math.min(body.length, 4096));
  const headerEnd = text.indexOf('\n\n');
  const lines = (headerEnd < 0 ? text : text.slice(0, headerEnd)).split('\n');
  const tree = lines.find((l) => l.startsWith('tree '))?.slice(5);
  if (!tree) throw new Error('gc: commit without a tree');
  return { tree, parents: lines.filter((l) => l.startsWith('parent ')).map((l) => l.slice(7)) };
}

function parseTree(body: Buffer): Array<{ mode: string; name: string; oid: string }> {
  const entries: Array<{ mode: string; name: string; oid: string }> = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    entries.push({
      mode: body.toString('latin1', at, space),
      name: body.toString('utf8', space + 1, nul),
      oid: body.toString('hex', nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return entries;
}

async function removeEmptyFanoutDirs(objectsDir: string): Promise<void> {
  for (const name of await fs.promises.readdir(objectsDir)) {
    if (/^[0-9a-f]{2}$/.test(name)) await fs.promises.rmdir(path.join(objectsDir, name)).catch(() => undefined);
  }
}
