import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemgitError, type ErrorCode } from '../store';

/**
 * Store ids name a subdirectory of the server's root. They come from URLs and are hostile: the pattern
 * admits no separator, no leading dot and no control character, and the resolved folder is checked to
 * stay a direct child of the root even through symbolic links.
 */

export const STORE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export class InvalidStoreIdError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_store_id';

  constructor(readonly storeId: unknown, reason: string) {
    super(`invalid store id ${JSON.stringify(typeof storeId === 'string' ? storeId.slice(0, 140) : storeId)}: ${reason}`);
  }
}

/** Why `id` is not a valid store id, or null when it is. */
export function storeIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return 'expected a string';
  if (id.length === 0) return 'empty';
  if (id.length > 128) return 'longer than 128 characters';
  if (!STORE_ID_PATTERN.test(id)) return 'use 1-128 of A-Z a-z 0-9 _ . - starting with a letter or digit';
  // Dots only: names like "..." are legal on POSIX but read as traversal to people and to some tools.
  if (/^[.]+$/.test(id)) return 'a name of dots only';
  return null;
}

export function isValidStoreId(id: unknown): id is string {
  return storeIdProblem(id) === null;
}

export function assertStoreId(id: unknown): asserts id is string {
  const problem = storeIdProblem(id);
  if (problem) throw new InvalidStoreIdError(id, problem);
}

/**
 * The folder of store `id` under `root` (which must exist): a direct child of the root's real path. When the
 * folder exists, its real path must be that same child (a symbolic link pointing elsewhere is refused).
 */
export async function storeDir(root: string, id: string): Promise<string> {
  assertStoreId(id);
  const realRoot = await fs.promises.realpath(root);
  const dir = path.join(realRoot, id);
  if (path.dirname(dir) !== realRoot || path.basename(dir) !== id) throw new InvalidStoreIdError(id, 'does not name a folder of the root');
  const real = await fs.promises.realpath(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return dir;
    throw error;
  });
  if (real !== dir) throw new InvalidStoreIdError(id, 'is a link out of the root');
  return dir;
}
