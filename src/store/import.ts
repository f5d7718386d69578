import * as fs from 'node:fs';
import * as path from 'node:path';
import { MEMORY_REPO_ROOT, MEMORY_ROOT, resolvePath, utf8ByteLength } from '../contract/paths';
import { MemgitError, type ErrorCode } from './errors';
import { toRepoPath } from './git-reader';
import type { CommitStep, MemoryStore } from './memory-store';
import { FILE_MODE } from './objects';
import { isKeep, normaliseKeeps, readMemoryFiles, writeMemoryTree } from './rollback/memory-state';

/**
 * Adopt a memory directory of the SDK's `BetaLocalFilesystemMemoryTool` (the folder given to it, which
 * holds `memories/`, or that `memories/` folder itself): one commit per file, or one for all (`single`).
 *
 * Everything is read and checked before anything is written: names the contract refuses (and links,
 * special files, non-UTF-8 or oversized files) are reported and skipped; a file that cannot be read, a
 * file the store already holds with other content, or a file where the store has a directory (or the
 * reverse), refuses the whole import and writes nothing. A file the store already holds byte for byte is
 * `unchanged`, so importing a folder again adds only what is new.
 *
 * All or nothing, with one commit per file too: the commits are written as one write of the store
 * (`writeCommits`): every one of them is durable before the branch moves, once, from the HEAD the import
 * started from to the last of them. A failure on the way (a full disk, an I/O error) or a killed process
 * leaves the branch where it was: nothing is half-imported.
 */

export interface ImportOptions {
  /** Recorded as `Memory-Actor: operator:<name>`. */
  operator: string;
  /** One commit for every file instead of one per file. */
  single?: boolean;
  /** Check and report, write nothing. */
  dryRun?: boolean;
  /** Largest file, in UTF-8 bytes (the store's `maxFileBytes`). */
  maxFileBytes: number;
}

export interface ImportReport {
  /** The folder the files were read from (the `memories/` folder). */
  source: string;
  imported: { path: string; bytes: number; commit: string | null }[];
  unchanged: string[];
  skipped: { path: string; reason: string }[];
  /** Commits written, oldest first (empty for a dry run). */
  commits: string[];
}

/** An import that cannot be done as asked; nothing was written. */
export class ImportRefusedError extends MemgitError {
  static override readonly code: ErrorCode = 'import_refused';
}

/** The import failed while writing; the message says whether the branch is where it was (nothing imported). */
export class ImportFailedError extends MemgitError {
  static override readonly code: ErrorCode = 'import_failed';
}

interface Candidate {
  virtual: string;
  repoPath: string;
  bytes: Buffer;
}

export function memoriesFolderOf(dir: string): string {
  const inner = path.join(dir, 'memories');
  if (fs.statSync(inner, { throwIfNoEntry: false })?.isDirectory()) return inner;
  if (path.basename(path.resolve(dir)) === 'memories' && fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return path.resolve(dir);
  throw new ImportRefusedError(`${dir} holds no memories/ folder (give the folder given to BetaLocalFilesystemMemoryTool, or its memories/ folder)`);
}

export async function importMemoryDir(store: MemoryStore, dir: string, options: ImportOptions): Promise<ImportReport> {
  const source = memoriesFolderOf(dir);
  const skipped: ImportReport['skipped'] = [];
  // Every file is read here, before anything is written: one that cannot be read refuses the import.
  const candidates = collect(source, options.maxFileBytes, skipped);
  const report: ImportReport = { source, imported: [], unchanged: [], skipped, commits: [] };
  const actor = `operator:${options.operator}`;
  const unchanged = (fresh: Candidate[]) => {
    const freshPaths = new Set(fresh.map((c) => c.virtual));
    return candidates.filter((c) => !freshPaths.has(c.virtual)).map((c) => c.virtual);
  };

  // Every check first, against HEAD now (reads only); the write checks again under the lock.
  let planned: Candidate[];
  try {
    planned = await checkAgainst(store, await readMemoryFiles(store.objects, await store.commitTree(await store.refreshHead())), candidates);
  } catch (error) {
    if (error instanceof ImportRefusedError) throw error;
    throw Object.assign(new ImportFailedError(`the import failed before writing anything (${messageOf(error)}); nothing was imported`), { cause: error });
  }
  report.unchanged = unchanged(planned);
  if (options.dryRun || planned.length === 0) {
    report.imported = planned.map((c) => ({ path: c.virtual, bytes: c.bytes.length, commit: null }));
    return report;
  }
  let startHead: string | null = null;
  let written: { commits: string[]; value: Candidate[] | null };
  try {
    written = await store.writeCommits(async (now) => {
      startHead = now;
      const files = await readMemoryFiles(store.objects, await store.commitTree(now));
      const fresh = await checkAgainst(store, files, candidates);
      if (fresh.length === 0) return { steps: [], value: fresh };
      const keepOid = await store.objects.hashBlob(new Uint8Array(0));
      let previous = (await store.objects.entryAt(await store.commitTree(now), MEMORY_REPO_ROOT))?.oid ?? null;
      const steps: CommitStep[] = [];
      const groups = options.single ? [fresh] : fresh.map((c) => [c]);
      for (const group of groups) {
        for (const c of group) files.set(c.repoPath, { oid: await store.objects.writeBlob(c.bytes), mode: FILE_MODE });
        normaliseKeeps(files, keepOid);
        previous = await writeMemoryTree(store.objects, files, previous);
        const title = options.single ? `import ${group.length} file${group.length === 1 ? '' : 's'}` : `import ${group[0].virtual}`;
        steps.push({ memoryTree: previous, meta: { title, actor } });
      }
      return { steps, value: fresh };
    });
  } catch (error) {
    if (error instanceof ImportRefusedError) throw error;
    throw await failure(store, startHead, error);
  }
  const fresh = written.value ?? [];
  report.unchanged = unchanged(fresh);
  report.commits = written.commits;
  report.imported = fresh.map((c, i) => ({ path: c.virtual, bytes: c.bytes.length, commit: written.commits[options.single ? 0 : i] ?? null }));
  return report;
}

/** What a failed write did, said truthfully: the branch is read back and compared with where it started. */
async function failure(store: MemoryStore, startHead: string | null, error: unknown): Promise<Error> {
  const reason = messageOf(error);
  // Failed before the write began (the lock, the repair of an earlier write): nothing was written.
  if (startHead === null) return Object.assign(new ImportFailedError(`the import failed before writing anything (${reason}); nothing was imported`), { cause: error });
  const now = await store.refreshHead().catch(() => null);
  const text =
    now === startHead
      ? `the import failed (${reason}); nothing was imported (HEAD is still ${startHead.slice(0, 12)})`
      : `the import failed (${reason}) and the store's HEAD could not be confirmed` +
        `${now ? ` (it is ${now.slice(0, 12)}, the import started at ${startHead.slice(0, 12)})` : ''}; check it with \`memgit log\``;
  return Object.assign(new ImportFailedError(text), { cause: error });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The files of `source` the store can hold, sorted by path; the rest go to `skipped` with the reason. */
function collect(source: string, maxFileBytes: number, skipped: ImportReport['skipped']): Candidate[] {
  const found: Candidate[] = [];
  const seen = new Map<string, string>();
  const unreadable = (shown: string, error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ImportRefusedError(`cannot read ${shown} (${code}); nothing was imported`);
  };
  const walk = (dir: string, rel: string) => {
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      unreadable(rel ? `${MEMORY_ROOT}/${rel}/` : `${MEMORY_ROOT}/`, error);
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      const shown = `${MEMORY_ROOT}/${relPath}`;
      const resolved = resolvePath(shown);
      if (!resolved.ok) {
        skipped.push({ path: shown, reason: resolved.error.replace(/^Error: /, '') });
        continue;
      }
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full, relPath);
        continue;
      }
      if (!entry.isFile()) {
        skipped.push({ path: shown, reason: entry.isSymbolicLink() ? 'a symbolic link (only regular files are imported)' : 'not a regular file' });
        continue;
      }
      let bytes = Buffer.alloc(0);
      try {
        bytes = fs.readFileSync(full);
      } catch (error) {
        unreadable(shown, error);
      }
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        skipped.push({ path: shown, reason: 'not UTF-8 text' });
        continue;
      }
      if (utf8ByteLength(text) > maxFileBytes) {
        skipped.push({ path: shown, reason: `${bytes.length} bytes; the limit for one memory file is ${maxFileBytes} bytes` });
        continue;
      }
      const twin = seen.get(resolved.virtual);
      if (twin !== undefined) {
        skipped.push({ path: shown, reason: `the same memory path as ${twin} (names are NFC-normalised)` });
        continue;
      }
      seen.set(resolved.virtual, shown);
      found.push({ virtual: resolved.virtual, repoPath: toRepoPath(resolved.rel), bytes });
    }
  };
  walk(source, '');
  return found.sort((a, b) => (a.virtual < b.virtual ? -1 : 1));
}

/**
 * The candidates the store does not hold yet. A candidate the store holds with other content, or that
 * collides with a directory or a file of the store, refuses the import.
 */
async function checkAgainst(store: MemoryStore, files: Awaited<ReturnType<typeof readMemoryFiles>>, candidates: Candidate[]): Promise<Candidate[]> {
  const fresh: Candidate[] = [];
  const dirs = new Set<string>();
  for (const p of files.keys()) for (let d = p.slice(0, p.lastIndexOf('/')); d.includes('/'); d = d.slice(0, d.lastIndexOf('/'))) dirs.add(d);
  for (const c of candidates) {
    const existing = files.get(c.repoPath);
    if (existing && !isKeep(c.repoPath)) {
      if (existing.oid === (await store.objects.hashBlob(c.bytes))) continue;
      throw new ImportRefusedError(`${c.virtual} is already in the store with other content; nothing was imported`);
    }
    if (dirs.has(c.repoPath)) throw new ImportRefusedError(`${c.virtual} is a directory in the store; nothing was imported`);
    for (let d = c.repoPath.slice(0, c.repoPath.lastIndexOf('/')); d.includes('/'); d = d.slice(0, d.lastIndexOf('/'))) {
      if (files.has(d)) throw new ImportRefusedError(`/${d} is a file in the store, so ${c.virtual} cannot be imported; nothing was imported`);
    }
    fresh.push(c);
  }
  return fresh;
}
