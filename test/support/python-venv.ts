/**
 * The Python virtual environment the Python example's test runs in (.venv-test in the checkout, git-ignored),
 * with the official `anthropic` package. A test that needs it calls ensurePythonVenv(): on a fresh clone it
 * is made here by scripts/python-venv.sh, once, under a lock so that parallel test files do not build it
 * over each other. When it cannot be made the test fails, saying why and how to make it.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as lockfile from 'proper-lockfile';
import { REPO_ROOT } from './dist';

export const VENV_DIR = path.join(REPO_ROOT, '.venv-test');
const SCRIPT = path.join(REPO_ROOT, 'scripts', 'python-venv.sh');
/** What the script installs, as it writes it last into the venv once they import. */
const READY_MARKER = '.memgit-ready';
const PACKAGES = 'anthropic\n';

export function venvPython(dir: string): string {
  return path.join(dir, 'bin', 'python');
}

function isReady(dir: string): boolean {
  try {
    return fs.existsSync(venvPython(dir)) && fs.readFileSync(path.join(dir, READY_MARKER), 'utf8') === PACKAGES;
  } catch {
    return false;
  }
}

/** Make sure `dir` is a virtual environment the Python tests can run in (making it when it is not); answers its python. */
export async function ensurePythonVenv(dir: string = VENV_DIR, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (isReady(dir)) return venvPython(dir);
  fs.mkdirSync(dir, { recursive: true });
  const release = await lockfile.lock(dir, {
    lockfilePath: path.join(dir, '.memgit-setup.lock'),
    retries: { retries: 3000, minTimeout: 100, maxTimeout: 100 },
    stale: 60_000,
  });
  try {
    if (isReady(dir)) return venvPython(dir); // another test file made it while this one waited
    try {
      await promisify(execFile)('/bin/sh', [SCRIPT, dir], { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
    } catch (error) {
      const failure = error as Error & { stdout?: string; stderr?: string };
      throw new Error(
        `The Python tests need a virtual environment with the anthropic package in ${dir}; making it failed:\n` +
          `${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim() +
          '\n\nIt takes python3 with its venv module (Debian: apt-get install python3-venv) and a package index ' +
          '(or local wheel set) pip can install anthropic from. Make it by hand with ./scripts/python-venv.sh',
      );
    }
    if (!isReady(dir)) throw new Error(`scripts/python-venv.sh ran but ${dir} is not ready (no ${READY_MARKER})`);
    return venvPython(dir);
  } finally {
    await release();
  }
}
