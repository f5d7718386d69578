import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import type { DurableFs } from '../durable-fs';
import { decodeSession, DREAM_BRANCH_PREFIX, DREAM_ID_PATTERN, REVIEW_ARCHIVE_PREFIX, REVIEW_BRANCH_PREFIX } from './names';

/** Reading review refs: loose files first (the common case, a few bytes), packed-refs as git keeps them too. */

const OID = /^[0-9a-f]{40}$/;

function packedRefs(gitdir: string): Map<string, string> {
  const refs = new Map<string, string>();
  let text: string;
  try {
    text = fs.readFileSync(path.join(gitdir, 'packed-refs'), 'utf8');
  } catch {
    return refs;
  }
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40}) (refs\/\S+)$/.exec(line);
    if (m) refs.set(m[2], m[1]);
  }
  return refs;
}

/** The commit a ref names, or null. */
export function readRef(gitdir: string, ref: string): string | null {
  try {
    const text = fs.readFileSync(path.join(gitdir, ref), 'utf8').trim();
    return OID.test(text) ? text : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
  }
  return packedRefs(gitdir).get(ref) ?? null;
}

/** Every ref under `prefix` (`refs/heads/review/`, `refs/memgit/reviews/`): full name → commit. */
export async function listRefsUnder(durableFs: DurableFs, gitdir: string, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const names = await git.listRefs({ fs: durableFs.gitFs, gitdir, filepath: prefix.replace(/\/$/, '') }).catch(() => [] as string[]);
  for (const name of names) {
    const ref = `${prefix}${name}`;
    const oid = readRef(gitdir, ref);
    if (oid) out.set(ref, oid);
  }
  return out;
}

export async function reviewBranches(durableFs: DurableFs, gitdir: string): Promise<Array<{ ref: string; session: string; tip: string }>> {
  const refs = await listRefsUnder(durableFs, gitdir, REVIEW_BRANCH_PREFIX);
  return [...refs].map(([ref, tip]) => ({ ref, session: decodeSession(ref.slice(REVIEW_BRANCH_PREFIX.length)), tip }));
}

export async function reviewArchives(durableFs: DurableFs, gitdir: string): Promise<Array<{ ref: string; id: string; commit: string }>> {
  const refs = await listRefsUnder(durableFs, gitdir, REVIEW_ARCHIVE_PREFIX);
  return [...refs].map(([ref, commit]) => ({ ref, id: ref.slice(REVIEW_ARCHIVE_PREFIX.length), commit }));
}

/** The dreams' branches (`refs/heads/dream/<id>`), whatever their dream's state. */
export async function dreamBranches(durableFs: DurableFs, gitdir: string): Promise<Array<{ ref: string; dream: string; tip: string }>> {
  const refs = await listRefsUnder(durableFs, gitdir, DREAM_BRANCH_PREFIX);
  return [...refs].map(([ref, tip]) => ({ ref, dream: ref.slice(DREAM_BRANCH_PREFIX.length), tip })).filter((b) => DREAM_ID_PATTERN.test(b.dream));
}
