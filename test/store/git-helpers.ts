/**
 * Helpers for the store tests: throwaway stores in os.tmpdir() and checks made with the real git CLI.
 * Every check of one repository runs in a single shell invocation, because process start-up dominates
 * on a 2-core machine.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONFORMANCE_DIR } from '../contract/harness';

export { CONFORMANCE_DIR };

export const INIT_MESSAGE = 'memgit: initialise store\n';
export const MUTATING_COMMANDS: ReadonlySet<string> = new Set(['create', 'str_replace', 'insert', 'delete', 'rename']);

export interface Vector {
  name: string;
  setup: Array<Record<string, unknown>>;
  input: Record<string, unknown>;
  expect: { is_error: boolean; text: string };
  options?: { createMode?: 'overwrite' | 'error'; maxFileBytes?: number };
}

export function loadVectors(): Vector[] {
  return JSON.parse(fs.readFileSync(path.join(CONFORMANCE_DIR, 'vectors.json'), 'utf8')) as Vector[];
}

export interface HostilePath {
  path: string;
  expected: string;
}

export function loadHostilePaths(): HostilePath[] {
  return JSON.parse(fs.readFileSync(path.join(CONFORMANCE_DIR, 'hostile-paths.json'), 'utf8')) as HostilePath[];
}

/** A fresh, empty directory for one store. */
export function makeTempDir(prefix = 'memgit-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  // Retried (ENOTEMPTY, EBUSY): a process a test started may still be finishing a write inside when it ends.
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

/** The normalised virtual path the spec records in trailers: one trailing `/` dropped, then NFC. */
export function normalisedPath(p: string): string {
  return (p.endsWith('/') ? p.slice(0, -1) : p).normalize('NFC');
}

/** What an agent commit's message must be, byte for byte (spec §5). */
export interface ExpectedCommit {
  id: string;
  command: string;
  path: string;
  newPath?: string;
  session: string;
  /** The server key of the call (`Memory-Key`), for calls made through `memgit server`. */
  key?: string;
}

export function expectedMessage(commit: ExpectedCommit): string {
  const trailers = [`Memory-Command: ${commit.command}`, `Memory-Path: ${commit.path}`];
  if (commit.newPath !== undefined) trailers.push(`Memory-New-Path: ${commit.newPath}`);
  trailers.push(`Memory-Session: ${commit.session}`);
  if (commit.key !== undefined) trailers.push(`Memory-Key: ${commit.key}`);
  return `${commit.id}\n\n${trailers.join('\n')}\n`;
}

/** The trailers git itself recognises in such a message (`%(trailers:only,unfold)`). */
export function expectedTrailers(commit: ExpectedCommit): string {
  return expectedMessage(commit).split('\n\n')[1];
}

export interface GitCommit {
  oid: string;
  /** The raw message (`%B`). */
  message: string;
  /** What `git log --format=%(trailers:only,unfold)` makes of it. */
  trailers: string;
}

export interface GitReport {
  /** Oldest first. */
  commits: GitCommit[];
  fsckCode: number;
  fsckOutput: string;
  status: string;
  branch: string;
}

const FIELD = '\x1f';
const RECORD = '\x1e';
const SECTION = '\x1d';

const REPORT_SCRIPT = [
  'cd "$1" || exit 99',
  `git log --reverse --format='%x1e%H%x1f%B%x1f%(trailers:only,unfold)'`,
  `printf '\\035'`,
  'git fsck --full 2>&1; printf "\\035%s" "$?"',
  `printf '\\035'`,
  'git status --porcelain 2>&1',
  `printf '\\035'`,
  'git symbolic-ref HEAD 2>&1',
].join('\n');

/** Log, fsck, status and branch of a repository, from one `sh` process. */
export function gitReport(dir: string): GitReport {
  const run = spawnSync('sh', ['-c', REPORT_SCRIPT, 'sh', dir], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git report failed (${run.status}): ${run.stderr}`);
  const [log, fsckOutput, fsckCode, status, branch] = run.stdout.split(SECTION);
  const commits = log
    .split(RECORD)
    .slice(1)
    .map((record) => {
      const [oid, message, trailers] = record.split(FIELD);
      return { oid, message, trailers: trailers.replace(/\n$/, '') };
    });
  return { commits, fsckCode: Number(fsckCode), fsckOutput, status, branch: branch.trim() };
}

/**
 * The repository holds the initial commit and exactly `expected` agent commits, in order, with the spec's
 * messages; fsck is clean and the working tree matches HEAD.
 */
export function expectRepository(report: GitReport, expected: readonly ExpectedCommit[]): void {
  expect(report.fsckOutput).toBe('');
  expect(report.fsckCode).toBe(0);
  expect(report.status).toBe('');
  expect(report.branch).toBe('refs/heads/main');
  expect(report.commits.map((c) => c.message)).toEqual([INIT_MESSAGE, ...expected.map(expectedMessage)]);
  expect(report.commits.slice(1).map((c) => c.trailers)).toEqual(expected.map(expectedTrailers));
}

/** Every file of HEAD's tree: repository path → bytes (`git ls-tree -r` + `git cat-file --batch`). */
export function headFiles(dir: string): Map<string, Buffer> {
  const listing = spawnSync('git', ['-C', dir, 'ls-tree', '-r', '-z', 'HEAD'], { maxBuffer: 64 * 1024 * 1024 });
  if (listing.status !== 0) throw new Error(`git ls-tree failed: ${listing.stderr}`);
  const entries = listing.stdout
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, file] = line.split('\t');
      const [mode, type, oid] = meta.split(' ');
      return { mode, type, oid, file };
    });
  for (const entry of entries) {
    if (entry.type !== 'blob' || entry.mode !== '100644') throw new Error(`unexpected entry ${JSON.stringify(entry)}`);
  }
  const files = new Map<string, Buffer>();
  const objects = gitObjects(dir, entries.map((e) => e.oid));
  entries.forEach((entry, i) => files.set(entry.file, Buffer.from(objects[i].content)));
  return files;
}

/** Every regular file below `root` in the working tree: path relative to `base` → bytes. */
export function workingTreeFiles(base: string, root = 'memories'): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(base, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else files.set(child, fs.readFileSync(path.join(base, child)));
    }
  };
  walk(root);
  return files;
}

/**
 * A cheap fingerprint of everything a call could have written: loose objects, refs, the index, the
 * working tree. Equal fingerprints before and after a call mean it wrote nothing.
 */
export function storeFingerprint(dir: string): string {
  const parts: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (child === '.git/memgit-write.lock') continue; // the write lock comes and goes with every write attempt
      // The call log records every call, failed ones too (that is its job), a moment after the answer.
      if (child === '.git/memgit/calls-v1.jsonl') continue;
      // Flags for likely secrets are scanned in the background after a write is acknowledged.
      if (child === '.git/memgit/flags-v1.jsonl' || child === '.git/memgit/flags-state-v1.json') continue;
      if (entry.isDirectory()) {
        parts.push(`${child}/`);
        walk(child);
      } else {
        const stat = fs.statSync(path.join(dir, child));
        parts.push(`${child} ${stat.size} ${stat.mtimeMs}`);
      }
    }
  };
  walk('');
  return parts.join('\n');
}

/** A memory tool_use block, as the Messages API sends it. */
export const toolUse = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

/**
 * A history with every mutating command, nested folders, and files that change a little at each call (what
 * a pack with delta chains is made of once git repacks it).
 */
export async function mixedWorkload(store: { execute(toolUse: unknown, options: { session: string }): Promise<{ is_error?: boolean }> }, calls: number): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const file = `/memories/topic-${i % 3}/note-${i % 5}.md`;
    const lines = Array.from({ length: 40 }, (_, k) => `line ${k} of ${file}: a fact worth keeping`).join('\n');
    const step = i % 10;
    const input =
      step === 7
        ? { command: 'rename', old_path: file, new_path: `/memories/moved/n-${i}.md` }
        : step === 9
          ? { command: 'delete', path: `/memories/moved/n-${i - 2}.md` }
          : step % 3 === 0
            ? { command: 'create', path: file, file_text: `${lines}\n` }
            : { command: 'str_replace', path: file, old_str: 'line 1 ', new_str: `line 1 (call ${i}) ` };
    const result = await store.execute(toolUse(`toolu_${i}`, input), { session: `sess_${Math.floor(i / 25)}` });
    if (result.is_error) await store.execute(toolUse(`toolu_${i}_c`, { command: 'create', path: file, file_text: `${lines}\n` }), { session: 's' });
  }
}

/**
 * Objects as the git CLI reads them: id, type and content, for `oids` (by default every object in the
 * repository), from one `git cat-file --batch` rather than a process per object.
 */
export function gitObjects(dir: string, oids?: readonly string[]): Array<{ oid: string; type: string; content: Buffer }> {
  const run = (args: string[], input?: string) => {
    const result = spawnSync('git', args, { cwd: dir, input, maxBuffer: 512 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
    return result.stdout;
  };
  const wanted = oids ?? run(['cat-file', '--batch-all-objects', '--batch-check']).toString('utf8').trim().split('\n').map((line) => line.split(' ')[0]);
  if (wanted.length === 0) return [];
  const batch = run(['cat-file', '--batch'], `${wanted.join('\n')}\n`);
  const objects = [];
  let at = 0;
  for (const oid of wanted) {
    const headerEnd = batch.indexOf(10, at);
    const header = batch.toString('utf8', at, headerEnd).split(' ');
    if (header[0] !== oid || header.length !== 3) throw new Error(`git cat-file --batch answered "${header.join(' ')}" for ${oid}`);
    const size = Number(header[2]);
    objects.push({ oid, type: header[1], content: batch.subarray(headerEnd + 1, headerEnd + 1 + size) });
    at = headerEnd + 1 + size + 1;
  }
  return objects;
}

/** Store options for tests that do not look at repair logs. */
export const QUIET = { log: () => undefined };

/** A fresh temporary folder for each test of the file, removed afterwards; call the result to get it. */
export function useTempDir(): () => string {
  let dir = '';
  beforeEach(() => {
    dir = makeTempDir();
  });
  afterEach(() => removeDir(dir));
  return () => dir;
}
