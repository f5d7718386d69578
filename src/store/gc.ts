import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import type { DurableFs } from './durable-fs';
import type { ObjectStore } from './objects';

/**
 * Packing ("memgit gc"): isomorphic-git writes one loose file per object and never packs on its own, so a
 * store grows by ~16 KB of disk per call and every later read pays for loose files. This gathers the
 * objects reachable from the branches, has isomorphic-git write them as one pack (git.packObjects: whole
 * objects, zlib-compressed, no deltas) and its index (git.indexPack), both through the durable fs, and
 * only once both are on disk removes the loose copies (and, for a full repack, the packs it replaces).
 * The caller holds the write lock, so no commit is written meanwhile; readers in other processes fall
 * back from a removed loose object to the packs, which are listed anew on every miss.
 *
 * Otherwise only objects still loose are packed: the walk stops at the first commit that is no longer
 * loose (an earlier gc packed it, and everything it reaches with it) — quick whatever the size of the
 * history, so this is what runs automatically every few thousand calls. `full` (`memgit gc`) packs
 * everything reachable into one pack and removes every older pack: objects no commit reaches (left by
 * interrupted calls) are dropped, as `git gc --prune=now` would.
 */

export interface GcOptions {
  full?: boolean;
  /**
   * With `full`: also delete every loose object the new pack does not hold (unreachable ones), as a
   * redaction needs so that erased content leaves the disk. Off for ordinary gc, which never deletes an
   * object it did not pack.
   */
  pruneUnreachable?: boolean;
  onProgress?: (message: string) => void;
}

export interface GcReport {
  packedObjects: number;
  packBytes: number;
  looseRemoved: number;
  packsRemoved: number;
  full: boolean;
  /** Nothing to do: no loose object and (for a full repack) a single pack already. */
  upToDate: boolean;
}

export async function repack(objects: ObjectStore, durableFs: DurableFs, dir: string, gitdir: string, options: GcOptions = {}): Promise<GcReport> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  const existingPacks = await listPacks(packDir);
  const full = options.full === true;
  const progress = options.onProgress ?? (() => undefined);
  // A second gc with nothing new: one pack, no loose object — everything reachable is in that pack.
  if (existingPacks.length <= 1 && !(await hasLooseObjects(gitdir)) && (existingPacks.length === 1 || !full)) {
    return { packedObjects: 0, packBytes: 0, looseRemoved: 0, packsRemoved: 0, full, upToDate: true };
  }
  const oids = await objectsToPack(objects, durableFs, gitdir, full, progress);
  if (oids.length === 0) return { packedObjects: 0, packBytes: 0, looseRemoved: 0, packsRemoved: 0, full, upToDate: true };

  const gitArgs = { fs: durableFs.gitFs, dir, gitdir, cache: objects.gitCache };
  try {
    return await writePackThenPrune(objects, durableFs, dir, gitdir, gitArgs, oids, existingPacks, full, progress, options.pruneUnreachable === true);
  } finally {
    // isomorphic-git caches the list of packs and their indexes: forget them, whether or not gc finished
    // (a failure after the pack landed may already have removed loose copies it now holds).
    objects.forgetPacks();
  }
}

async function writePackThenPrune(
  objects: ObjectStore,
  durableFs: DurableFs,
  dir: string,
  gitdir: string,
  gitArgs: { fs: DurableFs['gitFs']; dir: string; gitdir: string; cache: object },
  oids: string[],
  existingPacks: string[],
  full: boolean,
  progress: (message: string) => void,
  pruneUnreachable: boolean,
): Promise<GcReport> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  progress(`gc: writing ${oids.length} objects to a pack`);
  // The .pack before its .idx (readers find packs by their index), each fsynced as it is written (the
  // fs is DurableFs), and their directory entries flushed before anything is removed. Until then every
  // loose object stays; a failure before that point removes the new pack again (never an older one).
  let packFile: string | null = null;
  let packed: string[];
  try {
    const { filename } = await git.packObjects({ ...gitArgs, oids, write: true });
    packFile = path.join(packDir, filename!);
    ({ oids: packed } = await git.indexPack({ ...gitArgs, filepath: path.relative(dir, packFile) }));
    await durableFs.flush();
    const packedSet = new Set(packed);
    if (!oids.every((oid) => packedSet.has(oid))) throw new Error(`gc: ${filename} does not hold every object it was given`);
  } catch (error) {
    durableFs.discardStaged();
    const base = packFile?.slice(0, -'.pack'.length);
    if (base && !existingPacks.includes(base)) {
      for (const ext of ['.idx', '.pack']) await fs.promises.rm(`${base}${ext}`, { force: true }).catch(() => undefined);
    }
    throw error;
  }

  let looseRemoved = 0;
  for (const oid of packed) {
    try {
      await fs.promises.unlink(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
      looseRemoved++;
      if (looseRemoved % 5000 === 0) progress(`gc: removed ${looseRemoved} of ${packed.length} loose objects`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  if (full && pruneUnreachable) looseRemoved += await removeLooseExcept(path.join(gitdir, 'objects'), new Set(packed));
  await removeEmptyFanoutDirs(path.join(gitdir, 'objects'));
  const base = packFile.slice(0, -'.pack'.length);
  let packsRemoved = 0;
  if (full) {
    for (const old of existingPacks) {
      if (old === base) continue;
      for (const ext of ['.idx', '.pack', '.rev', '.bitmap']) await fs.promises.rm(`${old}${ext}`, { force: true });
      packsRemoved++;
    }
  }
  const packBytes = (await fs.promises.stat(packFile)).size;
  progress(`gc: ${packed.length} objects in ${path.basename(packFile)} (${packBytes} bytes), ${looseRemoved} loose removed, ${packsRemoved} old pack(s) removed`);
  return { packedObjects: packed.length, packBytes, looseRemoved, packsRemoved, full, upToDate: false };
}

/**
 * The oids to pack, commits first (newest first, as git orders them), read through isomorphic-git.
 * Incremental: only objects that are still loose, descending no further than a packed commit or tree.
 */
async function objectsToPack(
  objects: ObjectStore,
  durableFs: DurableFs,
  gitdir: string,
  full: boolean,
  progress: (message: string) => void,
): Promise<string[]> {
  const wanted = (oid: string) => full || fs.existsSync(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
  const seen = new Set<string>();
  const commits: string[] = [];
  const others: string[] = [];
  const trees: string[] = [];
  const todo = await branchTips(durableFs, gitdir);
  while (todo.length) {
    const oid = todo.pop()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    if (!wanted(oid)) continue;
    const { commit } = await objects.readCommit(oid);
    commits.push(oid);
    todo.push(...commit.parent);
    if (!seen.has(commit.tree)) trees.push(commit.tree);
    if (commits.length % 1000 === 0) progress(`gc: read ${commits.length} commits`);
  }
  while (trees.length) {
    const oid = trees.pop()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    if (!wanted(oid)) continue;
    others.push(oid);
    for (const entry of await objects.readTree(oid)) {
      if (entry.type === 'tree') trees.push(entry.oid);
      else if (entry.type === 'blob' && !seen.has(entry.oid)) {
        seen.add(entry.oid);
        if (wanted(entry.oid)) others.push(entry.oid);
      }
    }
  }
  return [...commits, ...others];
}

/** Loose objects, estimated like git's gc.auto: one fan-out directory counted, times 256. */
export async function estimateLooseObjects(gitdir: string): Promise<number> {
  const names = await fs.promises.readdir(path.join(gitdir, 'objects', '17')).catch(() => []);
  return names.filter((name) => /^[0-9a-f]{38}$/.test(name)).length * 256;
}

async function removeLooseExcept(objectsDir: string, keep: Set<string>): Promise<number> {
  let removed = 0;
  for (const fan of await fs.promises.readdir(objectsDir)) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const name of await fs.promises.readdir(path.join(objectsDir, fan))) {
      if (!/^[0-9a-f]{38}$/.test(name) || keep.has(fan + name)) continue;
      await fs.promises.rm(path.join(objectsDir, fan, name), { force: true });
      removed++;
    }
  }
  return removed;
}

/** What gc keeps: the branches, HEAD, and memgit's own refs (the redaction audit log). */
async function branchTips(durableFs: DurableFs, gitdir: string): Promise<string[]> {
  const tips = new Set<string>();
  for (const ref of await git.listRefs({ fs: durableFs.gitFs, gitdir, filepath: 'refs/memgit' }).catch(() => [] as string[])) {
    tips.add(await git.resolveRef({ fs: durableFs.gitFs, gitdir, ref: `refs/memgit/${ref}` }));
  }
  for (const branch of await git.listBranches({ fs: durableFs.gitFs, gitdir })) {
    tips.add(await git.resolveRef({ fs: durableFs.gitFs, gitdir, ref: `refs/heads/${branch}` }));
  }
  tips.add(await git.resolveRef({ fs: durableFs.gitFs, gitdir, ref: 'HEAD' }));
  return [...tips];
}

/** Is any object stored loose (one file under a fan-out directory)? Stops at the first one found. */
async function hasLooseObjects(gitdir: string): Promise<boolean> {
  const objectsDir = path.join(gitdir, 'objects');
  for (const name of await fs.promises.readdir(objectsDir).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(name)) continue;
    const files = await fs.promises.readdir(path.join(objectsDir, name)).catch(() => [] as string[]);
    if (files.some((f) => /^[0-9a-f]{38}$/.test(f))) return true;
  }
  return false;
}

/** Existing packs, as paths without extension. */
async function listPacks(packDir: string): Promise<string[]> {
  const names = await fs.promises.readdir(packDir).catch(() => [] as string[]);
  return names.filter((n) => /^pack-[0-9a-f]{40}\.idx$/.test(n)).map((n) => path.join(packDir, n.slice(0, -4)));
}

async function removeEmptyFanoutDirs(objectsDir: string): Promise<void> {
  for (const name of await fs.promises.readdir(objectsDir)) {
    if (/^[0-9a-f]{2}$/.test(name)) await fs.promises.rmdir(path.join(objectsDir, name)).catch(() => undefined);
  }
}
