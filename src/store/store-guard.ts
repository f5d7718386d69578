import * as fs from 'node:fs';
import * as path from 'node:path';
import { MEMORY_REPO_ROOT } from '../contract/paths';
import { DIR_MODE, DurableFs, syncDir } from './durable-fs';
import { NotAStoreError } from './errors';

/**
 * What `MemoryStore.open` may do to a folder, decided before anything is written to it:
 *
 * - `memgit`: a store memgit made — its marker file `.git/memgit/MEMGIT_STORE` (written before anything
 *   else when a store is created), or, for stores made before the marker existed, memgit's config key.
 * - `new`: a folder that is missing, empty (a README.md aside), or whose `.git` is empty: a store may be
 *   created there, but only when the caller asked for it (`create`).
 * - anything else is refused untouched: a file, a non-empty folder, and every git repository memgit did
 *   not create — with or without commits (`git init X` alone) — whatever command opened it.
 */

export const MARKER_FILE = 'MEMGIT_STORE';
const MARKER_TEXT = 'This git repository is a memgit store; memgit manages its branch, index and working tree.\n';

export type StoreKind = 'memgit' | 'new';

export function markerPath(gitdir: string): string {
  return path.join(gitdir, 'memgit', MARKER_FILE);
}

export async function inspectStoreDir(dir: string, create: boolean): Promise<StoreKind> {
  const stat = await fs.promises.stat(dir).catch(() => null);
  if (stat && !stat.isDirectory()) throw new NotAStoreError(`${dir} is not a folder`);
  const gitdir = path.join(dir, '.git');
  const gitEntries = await fs.promises.readdir(gitdir).catch(() => null);
  // A claim killed before its marker landed: `.git` holds nothing but memgit's own folder (git makes HEAD,
  // config and objects; nothing else makes .git/memgit), so the folder is still a new store to claim.
  const unfinishedClaim = gitEntries?.length === 1 && gitEntries[0] === 'memgit' && !fs.existsSync(markerPath(gitdir));
  if (gitEntries !== null && gitEntries.length > 0 && !unfinishedClaim) {
    if (await hasMemgitConfig(gitdir)) return 'memgit';
    if (fs.existsSync(markerPath(gitdir))) {
      if (!create) throw new NotFinishedError(dir);
      return 'memgit';
    }
    // An ordinary project repository (or one just made with `git init`): configuring it or committing
    // onto its branch would be vandalism, and a read-only command must not even leave a lock file.
    throw new NotAStoreError(`${dir} is a git repository that memgit did not create; choose an empty folder for the store`);
  }
  if (!create) throw new NotAStoreError(`there is no memgit store at ${dir} (pass --repo DIR or set MEMGIT_REPO; \`memgit exec\` creates one)`);
  const existing = stat ? (await fs.promises.readdir(dir)).filter((name) => name !== 'README.md' && name !== '.git') : [];
  if (existing.length > 0) {
    throw new NotAStoreError(`${dir} is not empty and is not a git repository; choose an empty folder`);
  }
  return 'new';
}

/** memgit's config key in `.git/config`, read as text (nothing is written, no git machinery involved). */
async function hasMemgitConfig(gitdir: string): Promise<boolean> {
  const text = await fs.promises.readFile(path.join(gitdir, 'config'), 'utf8').catch(() => '');
  return /^\s*\[memgit\]\s*$/m.test(text) && /^\s*configversion\s*=/im.test(text);
}

/** Claim a new store: the folder and `.git` owner-only, and the marker durable before anything else. */
export async function writeMarker(durableFs: DurableFs, dir: string): Promise<void> {
  const gitdir = path.join(dir, '.git');
  await fs.promises.mkdir(path.join(gitdir, 'memgit'), { recursive: true, mode: DIR_MODE });
  await fs.promises.chmod(dir, DIR_MODE);
  await durableFs.writeFile(markerPath(gitdir), MARKER_TEXT);
  if (durableFs.fsync) {
    for (const d of [path.join(gitdir, 'memgit'), gitdir, dir, path.dirname(dir)]) await syncDir(d);
  }
}

/**
 * Take group and world permissions away from a store that has them (created by an older memgit under a
 * lax umask, or changed by someone): another local user could plant a hook or move a ref. Cheap when
 * nothing needs it — a few well-known paths are looked at first — and the whole store is walked only
 * when one of them is too open. Returns how many entries were tightened. A README.md beside the store
 * is the user's and left alone.
 */
export async function tightenPermissions(dir: string): Promise<number> {
  const probes = ['', '.git', '.git/config', '.git/HEAD', '.git/hooks', '.git/objects', '.git/refs', '.git/refs/heads', '.git/memgit', MEMORY_REPO_ROOT];
  let open = false;
  for (const probe of probes) {
    const stat = await fs.promises.lstat(path.join(dir, probe)).catch(() => null);
    if (stat && !stat.isSymbolicLink() && (stat.mode & 0o077) !== 0) open = true;
  }
  if (!open) return 0;
  let tightened = 0;
  const walk = async (full: string, top: boolean): Promise<void> => {
    const stat = await fs.promises.lstat(full).catch(() => null);
    if (!stat || stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) {
      await fs.promises.chmod(full, stat.mode & 0o700);
      tightened++;
    }
    if (!stat.isDirectory()) return;
    for (const name of await fs.promises.readdir(full)) {
      if (top && name === 'README.md') continue;
      await walk(path.join(full, name), false);
    }
  };
  await walk(dir, true);
  return tightened;
}

/** A store whose first open was interrupted before it was configured: only a creating open finishes it. */
export class NotFinishedError extends NotAStoreError {
  constructor(dir: string) {
    super(`the store at ${dir} was never finished (its first open was interrupted); \`memgit exec\` finishes it`);
  }
}
