import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';

/**
 * Resolve HEAD, which every call does first (another process may have moved it).
 *
 * Through isomorphic-git that is two reads on libuv's thread pool and its ref machinery. In a store HEAD
 * is almost always `ref: refs/heads/<branch>` naming a loose ref file, and both are a few bytes in the
 * page cache: read synchronously here. Anything else (a packed or missing ref, a detached HEAD, a file
 * that does not read as expected, a failing disk) is resolved by isomorphic-git, which also reports it.
 */
export async function resolveHead(gitdir: string, gitFs: { promises: typeof fs.promises }): Promise<string> {
  return resolveLooseHead(gitdir) ?? git.resolveRef({ fs: gitFs, gitdir, ref: 'HEAD' });
}

const SYMBOLIC = /^ref: (refs\/heads\/[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*)\n?$/;
const OID = /^([0-9a-f]{40})\n?$/;

function resolveLooseHead(gitdir: string): string | null {
  try {
    const target = SYMBOLIC.exec(fs.readFileSync(path.join(gitdir, 'HEAD'), 'utf8'))?.[1];
    if (!target || target.split('/').some((part) => part === '.' || part === '..' || part.endsWith('.lock'))) return null;
    return OID.exec(fs.readFileSync(path.join(gitdir, target), 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}
