import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { MEMORY_REPO_ROOT } from '../contract/paths';
import { DIR_MODE, DurableFs } from './durable-fs';
import { FileChange, FILE_MODE, listFiles, ObjectStore } from './objects';

/**
 * The working tree and index are a projection of HEAD, kept so that a user can `cd` into the store and
 * use the git CLI. Git objects are the truth: after every commit the changed files are written here, and
 * on open after a crash the whole projection is rebuilt from HEAD.
 *
 * Someone with disk access may plant symlinks or other special files in the working tree. Writes never
 * follow them: every directory on the way is checked with lstat and replaced if it is not a plain
 * directory, and files are replaced by rename, which swaps the link itself rather than its target.
 */

/** The parts of the working tree that memgit owns; anything else (e.g. a README) is left alone. */
export const MANAGED_ROOTS = [MEMORY_REPO_ROOT, '.gitattributes'];

export class Worktree {
  constructor(
    private readonly dir: string,
    private readonly gitdir: string,
    private readonly fs: DurableFs,
    private readonly objects: ObjectStore,
  ) {}

  /** Apply one commit's file changes to the working tree and the index. */
  async apply(changes: FileChange[]): Promise<void> {
    await this.fs.syncDeferred(await this.project(changes));
  }

  /**
   * Apply the changes without making them durable: files are renamed into place unsynced, so is the index
   * isomorphic-git writes, and the caller fsyncs all of them in one round (`syncDeferred(written)`), while
   * its transaction marker covers a crash meanwhile. Returns the working-tree files written.
   */
  async project(changes: FileChange[]): Promise<string[]> {
    // Removals first: a file may be replaced by a directory of the same name in the same commit.
    for (const change of changes) if (!change.newOid) await this.removeFile(change.path);
    const written: string[] = [];
    for (const change of changes) {
      if (change.newOid) written.push(await this.writeFile(change.path, change.newOid, { deferSync: true }));
    }
    await this.fs.deferringSync(() => this.updateIndex(changes));
    return written;
  }

  /**
   * isomorphic-git's updateIndex, once per changed file (a call changes one or two). A written file is
   * entered with the blob id the commit already has, so isomorphic-git does not read, hash and deflate it
   * again; the entry's stat fields are then zero, and `git status` compares such a file by content (it
   * is one small file per call). The shared cache keeps the parsed index between calls (isomorphic-git
   * re-reads it when its stat says another process wrote it).
   */
  private async updateIndex(changes: FileChange[]): Promise<void> {
    for (const change of changes) {
      const args = { fs: this.fs.gitFs, dir: this.dir, gitdir: this.gitdir, cache: this.objects.gitCache, filepath: change.path };
      if (change.newOid) await git.updateIndex({ ...args, add: true, oid: change.newOid, mode: 0o100644 });
      else await git.updateIndex({ ...args, remove: true, force: true });
    }
  }

  /**
   * Rebuild the managed working tree and the index from `tree`: write what differs, remove what HEAD
   * does not have (including planted links and special files). Returns what it changed.
   *
   * Only plain files (100644) are checked out: a symlink (120000), gitlink (160000) or executable (100755)
   * entry planted in history is refused, so a checkout can never create a link or run anything.
   */
  async rebuild(tree: string): Promise<string[]> {
    const repaired: string[] = [];
    const wanted = await listFiles(this.objects, tree);
    for (const [file, entry] of wanted) {
      if (entry.mode === FILE_MODE) continue;
      wanted.delete(file);
      repaired.push(`refused ${file} (mode ${entry.mode} is not a plain file)`);
    }
    const present = await this.scanManaged();
    for (const [file, kind] of present) {
      const entry = wanted.get(file);
      if (kind !== 'file' || !entry) {
        await fs.promises.rm(path.join(this.dir, file), { recursive: true, force: true });
        repaired.push(`removed ${file}`);
      }
    }
    for (const [file, entry] of wanted) {
      const full = path.join(this.dir, file);
      if (present.get(file) === 'file') {
        const bytes = await fs.promises.readFile(full);
        if ((await this.objects.hashBlob(bytes)) === entry.oid) continue;
      }
      await this.writeFile(file, entry.oid);
      repaired.push(`wrote ${file}`);
    }
    await this.pruneEmptyDirs(path.join(this.dir, MEMORY_REPO_ROOT));
    await this.rebuildIndex(wanted);
    return repaired;
  }

  /**
   * A new index holding exactly the files just checked out, in one isomorphic-git call (git.add of all
   * of them reads and writes the index once; one updateIndex per file would rewrite it n times).
   */
  private async rebuildIndex(wanted: Map<string, unknown>): Promise<void> {
    await fs.promises.rm(path.join(this.gitdir, 'index'), { force: true });
    const filepath = [...wanted.keys()];
    await git.add({ fs: this.fs.gitFs, dir: this.dir, gitdir: this.gitdir, cache: {}, filepath, force: true });
    // git.add writes each file's blob again unless it is loose already (these are copies of objects in
    // HEAD's tree, e.g. packed ones): let them land with the index rather than linger in memory.
    await this.fs.flush();
  }

  /** Whether a link, FIFO or other non-regular file sits under the managed roots (a cheap lstat walk). */
  async hasSpecialFiles(): Promise<boolean> {
    for (const kind of (await this.scanManaged()).values()) if (kind !== 'file') return true;
    return false;
  }

  /** Every path under the managed roots: 'file' for regular files, 'other' for links and specials. */
  private async scanManaged(): Promise<Map<string, 'file' | 'other'>> {
    const found = new Map<string, 'file' | 'other'>();
    const walk = async (rel: string): Promise<void> => {
      // Only a missing entry is skipped: a failing lstat must not make a planted file look absent.
      const stat = await lstatOrNull(path.join(this.dir, rel));
      if (!stat) return;
      if (stat.isDirectory()) {
        for (const name of await fs.promises.readdir(path.join(this.dir, rel))) await walk(`${rel}/${name}`);
      } else {
        found.set(rel, stat.isFile() ? 'file' : 'other');
      }
    };
    for (const root of MANAGED_ROOTS) await walk(root);
    return found;
  }

  /** Write one file from its blob; returns its path. `deferSync`: the caller fsyncs it (see apply). */
  private async writeFile(repoPath: string, oid: string, options: { deferSync?: boolean } = {}): Promise<string> {
    const bytes = await this.objects.readBlob(oid);
    await this.ensurePlainDirs(path.posix.dirname(repoPath), !options.deferSync);
    const full = path.join(this.dir, repoPath);
    const existing = await lstatOrNull(full);
    if (existing && existing.isDirectory()) await fs.promises.rm(full, { recursive: true, force: true });
    if (options.deferSync) await this.fs.writeFileUnsynced(full, bytes);
    else await this.fs.writeFile(full, bytes);
    return full;
  }

  private async removeFile(repoPath: string): Promise<void> {
    const full = path.join(this.dir, repoPath);
    // Through a directory replaced by a link, the "file" is outside the store: never follow it. The link
    // and its siblings are the rebuild's to restore.
    if (!(await this.hasPlainDirs(path.posix.dirname(repoPath)))) throw new WorktreeDriftError(path.posix.dirname(repoPath));
    await fs.promises.rm(full, { force: true });
    // Drop directories the removal emptied, up to (not including) the memory root.
    let parent = path.dirname(full);
    const stop = path.join(this.dir, MEMORY_REPO_ROOT);
    while (parent.startsWith(stop + path.sep)) {
      try {
        await fs.promises.rmdir(parent);
      } catch {
        break;
      }
      parent = path.dirname(parent);
    }
  }

  private async hasPlainDirs(relDir: string): Promise<boolean> {
    let current = this.dir;
    for (const name of relDir === '.' ? [] : relDir.split('/')) {
      current = path.join(current, name);
      if (!(await lstatOrNull(current))?.isDirectory()) return false;
    }
    return true;
  }

  /**
   * Make every directory on `relDir` a real directory. When projecting one commit (`apply`), a link or
   * file in the way means someone changed the working tree: replacing just that entry would lose the
   * files HEAD has below it, so the whole projection is rebuilt instead (WorktreeDriftError). The rebuild
   * itself replaces what is in the way.
   */
  private async ensurePlainDirs(relDir: string, replace: boolean): Promise<void> {
    if (relDir === '.' || relDir === '') return;
    let current = this.dir;
    for (const name of relDir.split('/')) {
      current = path.join(current, name);
      const stat = await lstatOrNull(current);
      if (stat?.isDirectory()) continue;
      if (stat && !replace) throw new WorktreeDriftError(path.relative(this.dir, current));
      if (stat) await fs.promises.rm(current, { force: true });
      await fs.promises.mkdir(current, { mode: DIR_MODE });
    }
  }

  private async pruneEmptyDirs(dir: string): Promise<void> {
    const stat = await lstatOrNull(dir);
    if (!stat?.isDirectory()) return;
    for (const name of await fs.promises.readdir(dir)) await this.pruneEmptyDirs(path.join(dir, name));
    if ((await fs.promises.readdir(dir)).length === 0 && dir !== path.join(this.dir, MEMORY_REPO_ROOT)) {
      await fs.promises.rmdir(dir);
    }
  }
}

/** lstat, or null when nothing is there. Any other failure (EIO) is thrown: "absent" would be a guess. */
async function lstatOrNull(file: string): Promise<fs.Stats | null> {
  try {
    return await fs.promises.lstat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/** The working tree is not what the last projection left (a link or file where a folder should be). */
export class WorktreeDriftError extends Error {
  constructor(readonly relPath: string) {
    super(`the working tree has something other than a folder at ${relPath}; it is rebuilt from HEAD`);
  }
}
