/**
 * The installed package where another (unprivileged) user can run it. A test running as root hands work
 * to `nobody` so that file modes apply; that user must reach node, the CLI and every module it loads, but
 * the checkout may sit in a folder only its owner may enter (a `mktemp -d` folder, a home directory of
 * mode 0700). So the package (package.json, dist/src, views) and its production dependencies are copied
 * into a fresh folder under os.tmpdir() that everyone may enter: hard links where the file is readable by
 * all already (fast, no space), copies made readable otherwise.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './dist';

export interface SharedPackage {
  /** The folder holding the copy (outside the checkout), to remove when done. */
  root: string;
  /** The copy's compiled CLI (dist/src/cli/main.js). */
  cliMain: string;
  remove(): void;
}

/** The folders the CLI needs (the package's `files` that hold code, and package.json). */
const PACKAGE_PARTS = ['package.json', 'dist/src', 'views'];

/** Each folder from `dir` up to / must let others pass (o+x): else nobody reaches what is inside. */
export function folderOthersCannotEnter(dir: string): string | null {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if ((fs.statSync(current).mode & 0o001) === 0) return current;
    if (path.dirname(current) === current) return null;
  }
}

/** The top-level packages of node_modules that are not development-only (from package-lock.json). */
function productionPackages(): string[] {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([key, entry]) => key.startsWith('node_modules/') && !key.slice('node_modules/'.length).includes('node_modules/') && !entry.dev)
    .map(([key]) => key);
}

function copyTree(from: string, to: string): void {
  const stat = fs.lstatSync(from);
  if (stat.isSymbolicLink()) {
    fs.symlinkSync(fs.readlinkSync(from), to);
  } else if (stat.isDirectory()) {
    fs.mkdirSync(to);
    fs.chmodSync(to, 0o755); // whatever the umask
    for (const name of fs.readdirSync(from)) copyTree(path.join(from, name), path.join(to, name));
  } else if ((stat.mode & 0o004) !== 0 && linkable(from, to)) {
    // linked: the same file, readable by all
  } else {
    fs.copyFileSync(from, to);
    fs.chmodSync(to, (stat.mode & 0o777) | 0o444 | ((stat.mode & 0o100) !== 0 ? 0o111 : 0));
  }
}

function linkable(from: string, to: string): boolean {
  try {
    fs.linkSync(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK') return false; // another file system, or links refused
    throw error;
  }
}

/** Copy the built package (ensureBuilt() first) where every user can run it. */
export function sharePackage(): SharedPackage {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-shared-'));
  const remove = () => fs.rmSync(root, { recursive: true, force: true });
  try {
    fs.chmodSync(root, 0o755); // mkdtemp makes it 0700
    const closed = folderOthersCannotEnter(root);
    if (closed !== null) {
      throw new Error(`${closed} may not be entered by other users, so a test cannot hand them files below os.tmpdir() (${os.tmpdir()}); set TMPDIR to a folder they can enter`);
    }
    const pkg = path.join(root, 'memgit');
    const folder = (dir: string) => {
      if (!fs.existsSync(dir)) fs.mkdirSync(dir);
      fs.chmodSync(dir, 0o755); // whatever the umask
    };
    for (const dir of [pkg, path.join(pkg, 'dist'), path.join(pkg, 'node_modules')]) folder(dir);
    for (const part of PACKAGE_PARTS) copyTree(path.join(REPO_ROOT, part), path.join(pkg, part));
    for (const entry of productionPackages()) {
      const from = path.join(REPO_ROOT, entry);
      if (!fs.existsSync(from)) continue; // an optional dependency for another platform
      const to = path.join(pkg, entry);
      folder(path.dirname(to)); // node_modules/@scope
      copyTree(from, to);
    }
    return { root, cliMain: path.join(pkg, 'dist', 'src', 'cli', 'main.js'), remove };
  } catch (error) {
    remove();
    throw error;
  }
}
