/**
 * The Python environment of the Python tests (the package's pytest suite, the Python example): a virtual
 * environment in .venv-test in the checkout (git-ignored) with the package installed as users install it,
 * `pip install './clients/python[anthropic]' pytest`. A test that needs it calls ensurePythonClientVenv():
 * on a fresh clone it is made here, once, under a lock so that parallel test files do not build it over each
 * other; when the package's sources change it is installed again. When it cannot be made the test fails,
 * saying why and how to make it by hand.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as lockfile from 'proper-lockfile';
import { REPO_ROOT } from './dist';

export const VENV_DIR = path.join(REPO_ROOT, '.venv-test');
export const PACKAGE_DIR = path.join(REPO_ROOT, 'clients', 'python');
/** What is installed: the package with its extra, and pytest (both from pip's index or local wheel set). */
const REQUIREMENTS = ['./clients/python[anthropic]', 'pytest'];
/** Written last, once everything imports: what was installed, and from which sources of the package. */
const READY_MARKER = '.memgit-client-ready';
/** The lock other helpers making this environment take too, so that only one of them changes it at a time. */
const LOCK_FILE = '.memgit-setup.lock';

export function venvPython(dir: string = VENV_DIR): string {
  return path.join(dir, 'bin', 'python');
}

/** A digest of the package's sources (what `pip install ./clients/python` builds from). */
function packageFingerprint(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name === '__pycache__' || entry.name.endsWith('.egg-info') || entry.name === 'build' || entry.name === 'tests') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) hash.update(`${path.relative(PACKAGE_DIR, full)}\0`).update(fs.readFileSync(full)).update('\0');
    }
  };
  walk(PACKAGE_DIR);
  return hash.digest('hex');
}

function expectedMarker(): string {
  return `${REQUIREMENTS.join(' ')}\nsources ${packageFingerprint()}\n`;
}

function isReady(dir: string, marker: string): boolean {
  try {
    return fs.existsSync(venvPython(dir)) && fs.readFileSync(path.join(dir, READY_MARKER), 'utf8') === marker;
  } catch {
    return false;
  }
}

const run = promisify(execFile);

/** Make sure `dir` has the package and pytest installed from the current sources; answers its python. */
export async function ensurePythonClientVenv(dir: string = VENV_DIR): Promise<string> {
  if (isReady(dir, expectedMarker())) return venvPython(dir);
  fs.mkdirSync(dir, { recursive: true });
  const release = await lockfile.lock(dir, {
    lockfilePath: path.join(dir, LOCK_FILE),
    retries: { retries: 3000, minTimeout: 100, maxTimeout: 100 },
    stale: 60_000,
  });
  try {
    const marker = expectedMarker();
    if (isReady(dir, marker)) return venvPython(dir); // made by another test file while this one waited
    fs.rmSync(path.join(dir, READY_MARKER), { force: true });
    const options = { cwd: REPO_ROOT, encoding: 'utf8' as const, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 };
    const steps: Array<[string, string[]]> = [];
    if (!fs.existsSync(venvPython(dir))) steps.push(['python3', ['-m', 'venv', dir]]);
    // A local project is always built and installed again, so changed sources replace the installed copy.
    steps.push([path.join(dir, 'bin', 'pip'), ['install', '--retries', '0', '--quiet', '--disable-pip-version-check', ...REQUIREMENTS]]);
    steps.push([venvPython(dir), ['-c', 'import memgit, memgit.memory_tool, anthropic, pytest']]);
    for (const [command, args] of steps) {
      try {
        await run(command, args, options);
      } catch (error) {
        const failure = error as Error & { stdout?: string; stderr?: string };
        throw new Error(
          `The Python tests need a virtual environment in ${dir} with pip install ${REQUIREMENTS.join(' ')}; ` +
            `\`${command} ${args.join(' ')}\` failed:\n${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim() +
            '\n\nIt takes python3 with its venv module (Debian: apt-get install python3-venv) and a package index (or local ' +
            `wheel set) pip can install anthropic, pytest and setuptools from. By hand: python3 -m venv .venv-test && ` +
            `.venv-test/bin/pip install ${REQUIREMENTS.map((r) => `'${r}'`).join(' ')}`,
        );
      }
    }
    fs.writeFileSync(path.join(dir, READY_MARKER), marker);
    return venvPython(dir);
  } finally {
    await release();
  }
}
