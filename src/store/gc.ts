import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { DurableFs, syncDir, syncFile } from './durable-fs';
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
 *
 * A full gc compresses with deltas when the git binary is installed (engine `git`): isomorphic-git and
 * every npm library write whole objects only, which costs memory files ~8x their delta-compressed size.
 * git runs as `git pack-objects --revs` from exactly the tips gc keeps (never `git gc` or `git repack`,
 * which would also keep what the git index and reflogs name and would prune or pack refs themselves), under
 * memgit's write lock; memgit then makes the new pack durable itself and only then removes what it
 * replaces, so a crash at any point leaves a readable store. Without git, or if git fails, isomorphic-git
 * packs instead (engine `isomorphic-git`); the report says which engine packed.
 */

/** Who writes a full gc's pack: `auto` is git when it is installed, isomorphic-git otherwise. */
export type GcEngine = 'auto' | 'git' | 'isomorphic-git';

export interface GcOptions {
  full?: boolean;
  /**
   * With `full`: also delete every loose object the new pack does not hold (unreachable ones), as a
   * redaction needs so that erased content leaves the disk. Off for ordinary gc, which never deletes an
   * object it did not pack.
   */
  pruneUnreachable?: boolean;
  /** Who writes a full gc's pack (default `auto`); an incremental gc always uses isomorphic-git. */
  engine?: GcEngine;
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
  /** Who wrote the pack (for upToDate: who would have). */
  engine: 'git' | 'isomorphic-git';
  /** Why a full gc that could have used git did not (git missing, or the reason git failed). */
  engineNote?: string;
}

export async function repack(objects: ObjectStore, durableFs: DurableFs, dir: string, gitdir: string, options: GcOptions = {}): Promise<GcReport> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  const existingPacks = await listPacks(packDir);
  const full = options.full === true;
  const progress = options.onProgress ?? (() => undefined);
  const choice = full ? await chooseEngine(options.engine ?? 'auto') : { engine: 'isomorphic-git' as const };
  const nothing = { packedObjects: 0, packBytes: 0, looseRemoved: 0, packsRemoved: 0, full, upToDate: true, ...choice };
  // A second gc with nothing new: one pack, no loose object — everything reachable is in that pack (for
  // the git engine, a pack git wrote: a pack isomorphic-git wrote is worth compressing once more).
  if (existingPacks.length <= 1 && !(await hasLooseObjects(gitdir)) && (existingPacks.length === 1 || !full)) {
    if (choice.engine === 'isomorphic-git' || existingPacks.length === 0 || (await packedByGit(gitdir)) === path.basename(existingPacks[0])) return nothing;
  }
  const gitArgs = { fs: durableFs.gitFs, dir, gitdir, cache: objects.gitCache };
  const pruneUnreachable = options.pruneUnreachable === true;
  try {
    if (choice.engine === 'git') {
      try {
        return await packWithGit(durableFs, gitdir, existingPacks, progress, pruneUnreachable);
      } catch (error) {
        if (options.engine === 'git' || isStoreFault(error)) throw error;
        choice.engine = 'isomorphic-git';
        (choice as { engineNote?: string }).engineNote = `git pack-objects failed (${firstLine(error)}); isomorphic-git packed instead`;
        progress(`gc: ${choice.engineNote}`);
      }
    }
    const oids = await objectsToPack(objects, durableFs, gitdir, full, progress);
    if (oids.length === 0) return nothing;
    return { ...(await writePackThenPrune(objects, durableFs, dir, gitdir, gitArgs, oids, existingPacks, full, progress, pruneUnreachable)), ...choice };
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

  const report = await removeReplaced(gitdir, packFile, packed, existingPacks, full, pruneUnreachable, progress);
  return { ...report, engine: 'isomorphic-git' };
}

/**
 * Once a new pack and its index are durable: remove the loose copies of what it holds, for a full gc the
 * packs it replaces, and with `pruneUnreachable` every other loose object.
 */
async function removeReplaced(
  gitdir: string,
  packFile: string,
  packed: string[],
  existingPacks: string[],
  full: boolean,
  pruneUnreachable: boolean,
  progress: (message: string) => void,
): Promise<Omit<GcReport, 'engine'>> {
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
 * The git engine: `git pack-objects --revs` walks from the tips gc keeps and writes one pack with deltas
 * and its index; memgit fsyncs both and their directory, checks the index holds every tip, records the
 * pack as git's, and only then removes what it replaces. A failure before that removes the new pack again
 * (never an older one) and leaves every loose object in place.
 */
async function packWithGit(
  durableFs: DurableFs,
  gitdir: string,
  existingPacks: string[],
  progress: (message: string) => void,
  pruneUnreachable: boolean,
): Promise<GcReport> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  const tips = await branchTips(durableFs, gitdir);
  progress('gc: git pack-objects is compressing the store with deltas');
  await fs.promises.mkdir(packDir, { recursive: true });
  let base: string | null = null;
  let packed: string[];
  try {
    // core.sharedRepository=0600: git's temporary and final files are the owner's alone, like every file of a store.
    const args = ['-c', 'core.sharedRepository=0600', 'pack-objects', '--revs', '--delta-base-offset', '-q', path.join(packDir, 'pack')];
    const name = (await runGit(gitdir, args, tips.join('\n') + '\n')).toString('utf8').trim();
    if (!/^[0-9a-f]{40}$/.test(name)) throw new Error(`gc: git pack-objects named no pack (${JSON.stringify(name.slice(0, 80))})`);
    base = path.join(packDir, `pack-${name}`);
    for (const ext of ['.pack', '.idx']) {
      await fs.promises.chmod(base + ext, OBJECT_MODE);
      await syncFile(base + ext);
    }
    await syncDir(packDir);
    packed = parseShowIndex((await runGit(gitdir, ['show-index'], await fs.promises.readFile(`${base}.idx`))).toString('utf8'));
    const inPack = new Set(packed);
    const missing = tips.filter((tip) => !inPack.has(tip));
    if (missing.length) throw new Error(`gc: git's pack lacks ${missing.length} of the tips it was given (${missing[0]})`);
    await durableFs.writeFile(path.join(gitdir, 'memgit', GIT_PACK_RECORD), JSON.stringify({ pack: path.basename(base) }) + '\n');
  } catch (error) {
    if (base && !existingPacks.includes(base)) {
      for (const ext of ['.idx', '.pack', '.rev']) await fs.promises.rm(`${base}${ext}`, { force: true }).catch(() => undefined);
    }
    throw error;
  }
  const report = await removeReplaced(gitdir, `${base}.pack`, packed, existingPacks, true, pruneUnreachable, progress);
  return { ...report, engine: 'git' };
}

/** Packs are read-only and the owner's alone, as isomorphic-git's and the loose objects are. */
const OBJECT_MODE = 0o400;

/** The file naming the pack git wrote last (so that a gc with nothing new does not compress it again). */
const GIT_PACK_RECORD = 'gc-v1.json';

async function packedByGit(gitdir: string): Promise<string | null> {
  try {
    const record = JSON.parse(await fs.promises.readFile(path.join(gitdir, 'memgit', GIT_PACK_RECORD), 'utf8')) as { pack?: unknown };
    return typeof record.pack === 'string' ? record.pack : null;
  } catch {
    return null;
  }
}

/** Whether `git --version` runs, per PATH (asked once per process and PATH). */
const gitInstalled = new Map<string, Promise<boolean>>();

/** The engine a full gc uses: git if asked for or (auto) if installed, with the reason when it is not. */
async function chooseEngine(engine: GcEngine): Promise<{ engine: 'git' | 'isomorphic-git'; engineNote?: string }> {
  if (engine === 'isomorphic-git') return { engine };
  const key = process.env.PATH ?? '';
  if (!gitInstalled.has(key)) {
    gitInstalled.set(
      key,
      runGit(null, ['--version'], '').then(
        () => true,
        () => false,
      ),
    );
  }
  if (await gitInstalled.get(key)) return { engine: 'git' };
  if (engine === 'git') throw new Error('gc: the git binary is not installed (or not on PATH); use engine isomorphic-git');
  return { engine: 'isomorphic-git', engineNote: 'git is not installed: isomorphic-git packed (whole objects, no deltas)' };
}

/**
 * Run git with only the store's git dir in its environment: no inherited GIT_* variables (a hook's
 * GIT_INDEX_FILE, say), no system config, C locale. Resolves with stdout; rejects with git's stderr.
 */
function runGit(gitdir: string | null, args: string[], input: string | Buffer): Promise<Buffer> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' }, gitdir ? { GIT_DIR: gitdir } : {});
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.stdin.on('error', () => undefined); // git exiting early is reported by its exit status
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(Buffer.concat(out));
      const text = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' / ');
      reject(new Error(`git ${args.find((arg) => !arg.startsWith('-') && !arg.includes('=')) ?? ''} exited with ${signal ?? code}${text ? `: ${text}` : ''}`));
    });
    child.stdin.end(input);
  });
}

/** `git show-index` lines: "<offset> <oid> (<crc>)". */
function parseShowIndex(text: string): string[] {
  const oids: string[] = [];
  for (const line of text.split('\n')) {
    const oid = line.split(' ')[1];
    if (oid && /^[0-9a-f]{40}$/.test(oid)) oids.push(oid);
  }
  return oids;
}

/** A failure of the store's own disk (not of git): the fallback would fail the same way, so it is reported. */
function isStoreFault(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && code !== 'ENOENT';
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0].slice(0, 200);
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
