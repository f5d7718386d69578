import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemgitError, type ErrorCode } from '../store';

/**
 * A server root is trusted with every tenant's stores and with the keys that guard them: another local
 * user who may write to the root, to `.memgit` or to `keys.json` can plant a key, swap a store's `.git`
 * for a link to another tenant's, or rename stores. So the server refuses to start on a root that is not
 * its user's alone (`checkRootSafety`), and the registry creates the root owner-only (0700).
 */

export class UnsafeRootError extends MemgitError {
  static override readonly code: ErrorCode = 'unsafe_root';

  constructor(message: string) {
    super(message);
  }
}

/** Why `file` may not be trusted (writable by group or others, another owner, a link), or null. */
export function trustProblem(file: string, stat: fs.Stats, what: string): string | null {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  if (uid !== null && stat.uid !== uid) return `${what} ${file} is owned by uid ${stat.uid}, not by the user running the server (uid ${uid}): chown it, or run the server as its owner`;
  if ((stat.mode & 0o022) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    return `${what} ${file} is writable by ${stat.mode & 0o002 ? 'every user' : 'its group'} (mode ${mode}): another local user could plant keys or swap stores; run \`chmod go-w ${file}\``;
  }
  return null;
}

/**
 * Throw UnsafeRootError, with the fix in its message, when the root, `<root>/.memgit` or its `keys.json`
 * is writable by group or others, is not owned by this process's user, or (below the root) is a link.
 */
export async function checkRootSafety(root: string): Promise<void> {
  const checks: Array<{ file: string; what: string; follow: boolean }> = [
    { file: root, what: 'the server root', follow: true },
    { file: path.join(root, '.memgit'), what: 'the key folder', follow: false },
    { file: path.join(root, '.memgit', 'keys.json'), what: 'the key file', follow: false },
  ];
  for (const { file, what, follow } of checks) {
    const stat = await (follow ? fs.promises.stat(file) : fs.promises.lstat(file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (!stat) continue;
    if (stat.isSymbolicLink()) throw new UnsafeRootError(`${what} ${file} is a symbolic link: memgit reads keys only from a real file in the root`);
    const problem = trustProblem(file, stat, what);
    if (problem) throw new UnsafeRootError(problem);
  }
}
