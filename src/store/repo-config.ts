import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import type { DurableFs } from './durable-fs';

export const STORE_BRANCH = 'main';

/** Keeps bytes exact for git CLI users: no end-of-line or filter conversion of memory files. */
export const GITATTRIBUTES = '* -text\n';

/**
 * Settings that protect git CLI users working inside a store and keep the repository in the formats
 * isomorphic-git reads and writes. Repository-level config overrides a user's global config, so a global
 * `index.version=4` or `feature.manyFiles=true` cannot reach a store.
 */
const STORE_CONFIG: Array<[string, string]> = [
  ['core.symlinks', 'false'],
  ['core.protectNTFS', 'true'],
  ['core.protectHFS', 'true'],
  ['core.autocrlf', 'false'],
  ['core.ignorecase', 'false'], // isomorphic-git's init sets true; memory paths are case-sensitive
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.splitIndex', 'false'],
  ['core.untrackedCache', 'false'],
  ['index.version', '2'],
  ['index.skipHash', 'false'],
  ['feature.manyFiles', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['receive.denyCurrentBranch', 'refuse'],
];

/** Bump when STORE_CONFIG changes, so existing stores are brought up to date on their next open. */
const CONFIG_VERSION = '2';

/** The default store folder ships a README; the store's git must not see it as untracked. */
const EXCLUDES = ['/README.md', '.memgit-tmp-*'];

export async function configureRepository(durableFs: DurableFs, dir: string, gitdir: string): Promise<void> {
  const args = { fs: durableFs.gitFs, dir, gitdir };
  const version = await git.getConfig({ ...args, path: 'memgit.configversion' }).catch(() => undefined);
  if (version === CONFIG_VERSION) return;
  for (const [key, value] of STORE_CONFIG) await git.setConfig({ ...args, path: key, value });
  await git.setConfig({ ...args, path: 'memgit.configversion', value: CONFIG_VERSION });
  const excludeFile = path.join(gitdir, 'info', 'exclude');
  await fs.promises.mkdir(path.dirname(excludeFile), { recursive: true, mode: 0o700 });
  const current = await fs.promises.readFile(excludeFile, 'utf8').catch(() => '');
  const missing = EXCLUDES.filter((line) => !current.split('\n').includes(line));
  if (missing.length) {
    const prefix = current && !current.endsWith('\n') ? '\n' : '';
    await durableFs.writeFile(excludeFile, `${current}${prefix}${missing.join('\n')}\n`);
  }
}

/** A boolean setting of the store's config (`memgit.readonly`, `memgit.flagpersonaldata`): true only when set to true. */
export async function configFlag(gitFs: DurableFs['gitFs'], gitdir: string, key: string): Promise<boolean> {
  const value: unknown = await git.getConfig({ fs: gitFs, gitdir, path: key }).catch(() => undefined);
  return value === true || value === 'true';
}
