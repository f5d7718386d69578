import * as path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { resolvePath } from '../contract/paths';
import { CommitNotFoundError, findEnclosingStore, MemoryStore, StoreOptions } from '../store';
import { historyContext } from '../history/context';
import type { HistoryEntry } from '../history/entry';
import { pointAt } from '../history/points';

/** Options shared by every command that opens a store, registered in one place. */

export const DEFAULT_REPO = 'memories-repo';

export function repoOption(): Option {
  return new Option('--repo <dir>', 'the store (a git repository); env MEMGIT_REPO').default(
    undefined,
    `$MEMGIT_REPO, else the store the current folder is in, else ./${DEFAULT_REPO}`,
  );
}

/**
 * --repo, else $MEMGIT_REPO, else the memgit store the current folder is in (found as git finds its
 * repository; only a store with memgit's marker, never another git repository), else ./memories-repo.
 */
export function resolveRepo(repo: string | undefined): string {
  const given = repo ?? process.env.MEMGIT_REPO;
  if (given !== undefined && given !== '') return path.resolve(given);
  return findEnclosingStore(process.cwd()) ?? path.resolve(DEFAULT_REPO);
}

export async function openStore(repo: string | undefined, options: StoreOptions = {}): Promise<MemoryStore> {
  return MemoryStore.open(resolveRepo(repo), options);
}

/** Run `task` on the existing store at `repo`, opened only to read or decide (no replication, no flag scan), closed after. */
export async function withStore<T>(repo: string | undefined, task: (store: MemoryStore) => Promise<T>): Promise<T> {
  const store = await openStore(repo, { create: false, replicate: false, flags: false });
  try {
    return await task(store);
  } finally {
    await store.close();
  }
}

/**
 * Exit codes, the same for every command: 1 = something named was not found (a commit, a session, a
 * file at that point, a store) or another error a user can act on; 2 = a rollback conflict (nothing
 * written); 64 = a usage error (an unknown option, a malformed path, time or id).
 */
export const EXIT_ERROR = 1;
export const EXIT_CONFLICT = 2;
export const EXIT_USAGE = 64;

export const EXIT_CODES_HELP =
  '\nExit codes: 0 success; 1 not found (commit, tool_use id, session, file, store) or another error;\n' +
  '2 conflict (a rollback that later calls built on; nothing was written); 64 usage error (bad option,\n' +
  'a path outside /memories, a malformed time or id).';

/**
 * The CLI's one error printer: `memgit: <message>` on stderr. Messages carry no `memgit: ` of their own
 * (a MemgitError's, a command's), so the line has the prefix exactly once (test/cli/error-prefix.test.ts).
 */
export function printError(message: string): void {
  process.stderr.write(`memgit: ${message}\n`);
}

/** Print a clear one-line error and exit non-zero, for errors a user can act on. */
export function fail(message: string, code = EXIT_ERROR): never {
  printError(message);
  process.exit(code);
}

/** An option parser for a positive integer; commander reports a bad value as a usage error. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a positive integer');
  }
  return n;
}

/** A usage error: one line on stderr, exit 64. */
export function usage(message: string): never {
  fail(message, EXIT_USAGE);
}

/** A /memories path given on the command line, validated as the memory tool validates paths (else exit 64). */
export function memoryPath(value: string, what = 'path'): string {
  const resolved = resolvePath(value);
  if (!resolved.ok) usage(`${what}: ${resolved.error.replace(/^Error: /, '')}`);
  return resolved.virtual;
}

/** The commit a point names (the read model's points: src/history/points.ts); one that names nothing exits 1, a malformed one 64 (main). */
export async function resolveAt(store: MemoryStore, ref: string | undefined): Promise<HistoryEntry> {
  try {
    return await pointAt(historyContext(store), ref ?? 'HEAD~0');
  } catch (error) {
    if (error instanceof CommitNotFoundError) {
      await store.close();
      fail(error.detail);
    }
    throw error;
  }
}

/** A size on the command line: 512mb, 1gb, 4096 (bytes); 0 allowed. */
export function parseByteCount(value: string): number {
  const match = /^(\d+)(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) throw new InvalidArgumentError('expected a size such as 512mb or 1gb (0: no bound)');
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  const bytes = Number(match[1]) * unit;
  if (!Number.isSafeInteger(bytes)) throw new InvalidArgumentError('too large');
  return bytes;
}

/** A size above 0. */
export function parsePositiveByteCount(value: string): number {
  const bytes = parseByteCount(value);
  if (bytes === 0) throw new InvalidArgumentError('expected a size above 0, such as 256mb');
  return bytes;
}
