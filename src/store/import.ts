import * as fs from 'node:fs';
import * as path from 'node:path';
import { MEMORY_ROOT as VIRTUAL_ROOT, resolvePath, utf8ByteLength } from '../contract/paths';
import { MemgitError } from './errors';
import { MEMORY_ROOT, toRepoPath } from './git-reader';
import type { MemoryStore } from './memory-store';
import { FILE_MODE } from './objects';
import { isKeep, normaliseKeeps, readMemoryFiles, writeMemoryTree } from './rollback/memory-state';

/**
 * Adopt a memory directory of the SDK's `BetaLocalFilesystemMemoryTool` (the folder given to it, which
 * holds `memories/`, or that `memories/` folder itself): one commit per file, or one for all (`single`).
 *
 * Everything is checked before the first commit: names the contract refuses (and links, special files,
 * non-UTF-8 or oversized files) are reported and skipped; a file the store already holds with other
 * content, or a file where the store has a directory (or the reverse), refuses the whole import and writes
 * nothing. A file the store already holds byte for byte is `unchanged`, so an import stopped half-way (a
 * killed process, with one commit per file) is finished by running it again; `single` is all or nothing.
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
export class ImportRefusedError extends MemgitError {}

interface Candidate {
  virtual: string;
  repoPath: string;
  bytes: Buffer;
}

export function memoriesFolderOf(dir: string): string {
  const inner = path.join(dir, 'memories');
  if (fs.statSync(inner, { throwIfNoEntry: false })?.isDirectory()) return inner;
  if (path.basename(path.resolve(dir)) === 'memories' && fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return path.resolve(dir);
  throw new ImportRefusedError(`memgit: ${dir} holds no memories/ folder (give the folder given to BetaLocalFilesystemMemoryTool, or its memories/ folder)`);
}

export async function importMemoryDir(store: MemoryStore, dir: string, options: ImportOptions): Promise<ImportReport> {
  const source = memoriesFolderOf(dir);
  const skipped: ImportReport['skipped'] = [];
  const candidates = collect(source, options.maxFileBytes, skipped);
  const report: ImportReport = { source, imported: [], unchanged: [], skipped, commits: [] };
  const operator = options.operator;
  const write = async (batch: Candidate[], title: string) => {
    const { commit } = await store.writeCommit(async (head) => {
      const files = await readMemoryFiles(store.objects, await store.commitTree(head));
      const fresh = await checkAgainst(store, files, batch);
      if (fresh.length === 0) return null;
      for (const c of fresh) files.set(c.repoPath, { oid: await store.objects.writeBlob(c.bytes), mode: FILE_MODE });
      normaliseKeeps(files, await store.objects.hashBlob(new Uint8Array(0)));
      const previous = (await store.objects.entryAt(await store.commitTree(head), MEMORY_ROOT))?.oid ?? null;
      return { memoryTree: await writeMemoryTree(store.objects, files, previous), meta: { title, actor: `operator:${operator}` }, value: null };
    });
    return commit;
  };

  // Every check first, against HEAD now; the writes check again under the lock.
  const head = await store.refreshHead();
  const fresh = await checkAgainst(store, await readMemoryFiles(store.objects, await store.commitTree(head)), candidates);
  const freshPaths = new Set(fresh.map((c) => c.virtual));
  report.unchanged = candidates.filter((c) => !freshPaths.has(c.virtual)).map((c) => c.virtual);
  if (options.dryRun || fresh.length === 0) {
    report.imported = fresh.map((c) => ({ path: c.virtual, bytes: c.bytes.length, commit: null }));
    return report;
  }
  if (options.single) {
    const commit = await write(fresh, `import ${fresh.length} file${fresh.length === 1 ? '' : 's'}`);
    if (commit) report.commits.push(commit);
    report.imported = fresh.map((c) => ({ path: c.virtual, bytes: c.bytes.length, commit }));
  } else {
    for (const c of fresh) {
      const commit = await write([c], `import ${c.virtual}`);
      if (commit) report.commits.push(commit);
      report.imported.push({ path: c.virtual, bytes: c.bytes.length, commit });
    }
  }
  return report;
}

/** The files of `source` the store can hold, sorted by path; the rest go to `skipped` with the reason. */
function collect(source: string, maxFileBytes: number, skipped: ImportReport['skipped']): Candidate[] {
  const found: Candidate[] = [];
  const seen = new Map<string, string>();
  const walk = (dir: string, rel: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      const shown = `${VIRTUAL_ROOT}/${relPath}`;
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
      const bytes = fs.readFileSync(full);
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
      throw new ImportRefusedError(`memgit: ${c.virtual} is already in the store with other content; nothing was imported`);
    }
    if (dirs.has(c.repoPath)) throw new ImportRefusedError(`memgit: ${c.virtual} is a directory in the store; nothing was imported`);
    for (let d = c.repoPath.slice(0, c.repoPath.lastIndexOf('/')); d.includes('/'); d = d.slice(0, d.lastIndexOf('/'))) {
      if (files.has(d)) throw new ImportRefusedError(`memgit: /${d} is a file in the store, so ${c.virtual} cannot be imported; nothing was imported`);
    }
    fresh.push(c);
  }
  return fresh;
}
