import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Find the store a command runs inside, as git finds its repository from a subdirectory: the nearest
 * directory at or above `from` whose `.git` is a folder carrying memgit's own config marker
 * (`memgit.configversion`). An ordinary git repository on the way up is never adopted (memgit must not
 * configure or commit to what it did not create): the walk goes past it.
 */
export function findEnclosingStore(from: string): string | null {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (hasStoreMarker(dir)) return dir;
    if (path.dirname(dir) === dir) return null;
  }
}

/** Does `dir/.git/config` carry `configversion` in a `[memgit]` section? Read as text: no git call, no side effect. */
export function hasStoreMarker(dir: string): boolean {
  let config: string;
  try {
    const gitdir = path.join(dir, '.git');
    if (!fs.statSync(gitdir).isDirectory()) return false;
    config = fs.readFileSync(path.join(gitdir, 'config'), 'utf8');
  } catch {
    return false;
  }
  let inMemgitSection = false;
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (section) inMemgitSection = section[1].toLowerCase() === 'memgit' && !line.includes('"');
    else if (inMemgitSection && /^configversion\s*=/i.test(line)) return true;
  }
  return false;
}
