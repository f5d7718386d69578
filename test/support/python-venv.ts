/**
 * The one Python environment of the Python tests (the package's pytest suite, test/clients/python.test.ts;
 * the Python example, test/examples/python.test.ts): a virtual environment in .venv-test in the checkout
 * (git-ignored) with the package installed as users install it, `pip install './clients/python[anthropic]'
 * pytest`. A test that needs it calls ensurePythonVenv(): on a fresh clone it is made here, once, under one
 * lock so that parallel test files do not build it over each other; when the package's sources change it is
 * installed again. When it cannot be made the test fails (never skips), saying why and how to make it by hand.
 *
 * pip builds a local project in its own folder (build/, *.egg-info), so the package is built from a copy
 * inside the environment's folder, under the lock: the checkout is left as it was, and two environments
 * (the tests of this helper make their own) never build in the same folder at once.
 *
 * A python3 without ensurepip (Debian's, without the python3-venv package) cannot make an environment
 * with pip in it; the tests then make their own way, with venvPythonDir(): a `python3` whose `-m venv`
 * makes the environment without pip and installs pip into it with the system's pip. Nothing beyond
 * `npm test` needs installing for it.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as lockfile from 'proper-lockfile';
import { REPO_ROOT } from './dist';

export const VENV_DIR = path.join(REPO_ROOT, '.venv-test');
export const PACKAGE_DIR = path.join(REPO_ROOT, 'clients', 'python');
/** What is installed, as a user types it from the checkout: the package with its extra, and pytest. */
export const REQUIREMENTS = ['./clients/python[anthropic]', 'pytest'];
/** Written last, once everything imports: what was installed, and from which sources of the package. */
const READY_MARKER = '.memgit-ready';
/** The one lock of an environment: whoever makes or changes it holds it. */
const LOCK_FILE = '.memgit-setup.lock';
/** Where the package is copied to be built (inside the environment, so under its lock). */
const BUILD_COPY = '.memgit-package';
/** Left by pip and Python in a package folder: not sources. */
const NOT_SOURCES = new Set(['__pycache__', 'build', 'dist', 'tests']);

/**
 * A folder to put first on PATH for `python3 -m venv` to work: null when the system's python3 has ensurepip
 * (nothing to do), else one holding a `python3` that makes the environment without pip, then installs
 * pip into it with the system python's own pip (whose index or local wheel set it uses).
 */
export function venvPythonDir(): string | null {
  const probe = spawnSync('python3', ['-c', 'import ensurepip, venv'], { encoding: 'utf8' });
  if (probe.status === 0) return null;
  const real = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();
  if (!real) return null; // no python3 at all: the step that runs it says so
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-python3-'));
  fs.writeFileSync(path.join(dir, 'python3'), venvShim(real), { mode: 0o755 });
  return dir;
}

/** The `python3` of venvPythonDir (exported for its test, which runs it whatever the system has). */
export function venvShim(realPython: string): string {
  const real = `'${realPython.replace(/'/g, `'\\''`)}'`;
  return [
    '#!/bin/sh',
    '# python3 for the memgit tests, on a machine whose python3 lacks ensurepip: `-m venv DIR` makes the',
    "# environment without pip, then installs pip into it with the system python's pip.",
    'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then',
    '  shift 2',
    `  ${real} -m venv --without-pip "$@" || exit $?`,
    '  for dir; do :; done',
    `  exec ${real} -m pip --python "$dir/bin/python" install --retries 0 --quiet --disable-pip-version-check pip`,
    'fi',
    `exec ${real} "$@"`,
    '',
  ].join('\n');
}

export function venvPython(dir: string = VENV_DIR): string {
  return path.join(dir, 'bin', 'python');
}

function isSource(name: string): boolean {
  return !NOT_SOURCES.has(name) && !name.endsWith('.egg-info');
}

/** A digest of the package's sources (what `pip install ./clients/python` builds from). */
export function packageFingerprint(packageDir: string = PACKAGE_DIR): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!isSource(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) hash.update(`${path.relative(packageDir, full)}\0`).update(fs.readFileSync(full)).update('\0');
    }
  };
  walk(packageDir);
  return hash.digest('hex');
}

function expectedMarker(packageDir: string): string {
  return `${REQUIREMENTS.join(' ')}\nsources ${packageFingerprint(packageDir)}\n`;
}

function isReady(dir: string, marker: string): boolean {
  try {
    return fs.existsSync(venvPython(dir)) && fs.readFileSync(path.join(dir, READY_MARKER), 'utf8') === marker;
  } catch {
    return false;
  }
}

const run = promisify(execFile);

/**
 * Make sure `dir` has the package (from `packageDir`'s current sources) and pytest installed, making or
 * updating it when it has not; answers its python. `env` is the environment pip and python3 run in.
 */
export async function ensurePythonVenv(dir: string = VENV_DIR, env: NodeJS.ProcessEnv = process.env, packageDir: string = PACKAGE_DIR): Promise<string> {
  if (isReady(dir, expectedMarker(packageDir))) return venvPython(dir);
  fs.mkdirSync(dir, { recursive: true });
  const release = await lockfile.lock(dir, {
    lockfilePath: path.join(dir, LOCK_FILE),
    // Long enough to wait for another test file's first install on a slow machine (pip's timeout below).
    retries: { retries: 6000, minTimeout: 100, maxTimeout: 100 },
    stale: 60_000,
  });
  try {
    if (isReady(dir, expectedMarker(packageDir))) return venvPython(dir); // made by another test file while this one waited
    fs.rmSync(path.join(dir, READY_MARKER), { force: true });
    const copy = path.join(dir, BUILD_COPY, 'python');
    fs.rmSync(path.join(dir, BUILD_COPY), { recursive: true, force: true });
    fs.cpSync(packageDir, copy, { recursive: true, filter: (source) => source === packageDir || isSource(path.basename(source)) });
    // What is built is what the marker names (a change made to the sources during the build makes it again next time).
    const marker = expectedMarker(copy);
    const requirements = [`${copy}[anthropic]`, ...REQUIREMENTS.slice(1)];
    // PIP_RETRIES=0 in the environment, not only --retries 0 on pip's command line: pip builds the package
    // in an isolated environment whose own pip (installing setuptools) reads only the environment, and
    // would otherwise retry an unreachable index five times (7 s of waiting per install).
    const options = { cwd: REPO_ROOT, env: { ...env, PIP_RETRIES: '0' }, encoding: 'utf8' as const, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 };
    const steps: Array<[string, string[]]> = [];
    const shimDir = fs.existsSync(venvPython(dir)) ? null : venvPythonDir();
    if (!fs.existsSync(venvPython(dir))) steps.push([shimDir ? path.join(shimDir, 'python3') : 'python3', ['-m', 'venv', dir]]);
    // --retries 0: an unreachable index fails at once. A local project is always built and installed again,
    // so changed sources replace the installed copy.
    steps.push([path.join(dir, 'bin', 'pip'), ['install', '--retries', '0', '--quiet', '--disable-pip-version-check', ...requirements]]);
    steps.push([venvPython(dir), ['-c', 'import memgit, memgit.memory_tool, anthropic, pytest']]);
    for (const [command, args] of steps) {
      try {
        await run(command, args, options);
      } catch (error) {
        if (shimDir) fs.rmSync(shimDir, { recursive: true, force: true });
        const failure = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
        const why = failure.code === 'ENOENT' ? `${command}: not found on PATH` : `${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim();
        throw new Error(
          `The Python tests need a virtual environment in ${dir} with pip install ${REQUIREMENTS.join(' ')}; ` +
            `\`${command} ${args.join(' ')}\` failed:\n${why}\n\n` +
            'It takes python3 with its venv module (and ensurepip, or else pip) and a package index (or local ' +
            'wheel set) pip can install anthropic, pytest and setuptools from. By hand, from the checkout: ' +
            `python3 -m venv .venv-test && .venv-test/bin/pip install ${REQUIREMENTS.map((r) => `'${r}'`).join(' ')}`,
        );
      }
    }
    if (shimDir) fs.rmSync(shimDir, { recursive: true, force: true });
    fs.writeFileSync(path.join(dir, READY_MARKER), marker);
    return venvPython(dir);
  } finally {
    fs.rmSync(path.join(dir, BUILD_COPY), { recursive: true, force: true });
    await release();
  }
}
