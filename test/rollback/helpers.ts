/** Helpers for the rollback tests: stores built through store.execute, checked with the real git CLI. */
import { execFileSync } from 'node:child_process';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';

export const OPERATOR = { operator: 'alice' };

export async function newStore(): Promise<MemoryStore> {
  return MemoryStore.open(makeTempDir('memgit-rollback-'), { fsync: false, log: () => undefined });
}

export async function dispose(store: MemoryStore): Promise<void> {
  await store.close();
  removeDir(store.dir);
}

/**
 * Run one mutating memory call that must succeed; returns its commit. Waits until it has settled (its
 * working-tree file and the index are written after the result), as these tests read the store's files.
 */
export async function call(store: MemoryStore, id: string, input: Record<string, unknown>, session = 'sess_a'): Promise<string> {
  const report = await store.executeWithReport({ type: 'tool_use', id, name: 'memory', input }, { session });
  if (report.result.is_error || !report.commit) throw new Error(`${id} failed: ${report.result.content}`);
  await store.settled();
  return report.commit;
}

export const create = (path: string, file_text: string) => ({ command: 'create', path, file_text });
export const replace = (path: string, old_str: string, new_str: string) => ({ command: 'str_replace', path, old_str, new_str });
export const insert = (path: string, insert_line: number, insert_text: string) => ({ command: 'insert', path, insert_line, insert_text });
export const remove = (path: string) => ({ command: 'delete', path });
export const rename = (old_path: string, new_path: string) => ({ command: 'rename', old_path, new_path });

export async function view(store: MemoryStore, path: string): Promise<string> {
  return (await store.execute({ type: 'tool_use', id: `view_${Math.random().toString(36).slice(2)}`, name: 'memory', input: { command: 'view', path } }, { session: 'sess_view' })).content;
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).replace(/\n$/, '');
}

/** `git ls-tree -r` of the memory at a revision: the exact file list with blob oids. */
export function memoryListing(dir: string, rev = 'HEAD'): string {
  return git(dir, 'ls-tree', '-r', `${rev}:memories`);
}

/** File content at HEAD, read by git. */
export function show(dir: string, path: string, rev = 'HEAD'): string {
  return git(dir, 'show', `${rev}:${path}`);
}
