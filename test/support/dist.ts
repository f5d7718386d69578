/**
 * The compiled package (dist/), for tests that run it as users do: the CLI as a process, the package
 * entry from ESM. `npm install` builds it (prepare); when it is missing or older than the sources, it is
 * rebuilt here once, under a lock so that parallel test files do not compile over each other.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const DIST_ENTRY = path.join(REPO_ROOT, 'dist/src/index.js');
export const CLI_MAIN = path.join(REPO_ROOT, 'dist/src/cli/main.js');

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function newestInputMtime(extraSources: string[]): number {
  const inputs = [path.join(REPO_ROOT, 'package.json'), path.join(REPO_ROOT, 'tsconfig.json'), ...extraSources].map((f) => fs.statSync(f).mtimeMs);
  return Math.max(newestSourceMtime(path.join(REPO_ROOT, 'src')), ...inputs);
}

/** The oldest of the outputs the tests need, or -1 when one is missing. */
function oldestOutputMtime(): number {
  const outputs = [DIST_ENTRY, CLI_MAIN];
  if (!outputs.every((file) => fs.existsSync(file))) return -1;
  return Math.min(...outputs.map((file) => fs.statSync(file).mtimeMs));
}

function isStale(extraSources: string[]): boolean {
  return newestInputMtime(extraSources) > oldestOutputMtime();
}

/**
 * Make sure dist/ is built from the current sources (compiling with tsc when it is not). `extraSources`:
 * files outside src/ that a test runs compiled (e.g. test/store/crash-writer.ts).
 */
export async function ensureBuilt(extraSources: string[] = []): Promise<void> {
  if (!isStale(extraSources)) return;
  fs.mkdirSync(path.join(REPO_ROOT, 'dist'), { recursive: true });
  const release = await lockfile.lock(path.join(REPO_ROOT, 'dist'), {
    lockfilePath: path.join(REPO_ROOT, 'dist', '.build.lock'),
    retries: { retries: 600, minTimeout: 100, maxTimeout: 100 },
    stale: 120_000,
  });
  try {
    if (!isStale(extraSources)) return; // another test file built it while we waited
    const sourcesAtStart = newestInputMtime(extraSources);
    const tsc = require.resolve('typescript/bin/tsc');
    const build = spawnSync(process.execPath, [tsc, '-p', path.join(REPO_ROOT, 'tsconfig.json')], { encoding: 'utf8' });
    // tsc emits even with type errors elsewhere in the tree (another engineer's work in progress); the
    // outputs we need must exist and be newer than the sources the build started from (a source saved
    // during the build is not a failure of this build).
    if (sourcesAtStart > oldestOutputMtime()) throw new Error(`building dist/ failed:\n${build.stdout}${build.stderr}`);
    fs.chmodSync(CLI_MAIN, 0o755); // as `npm run build` does: the package's bin must be executable for npx
  } finally {
    await release();
  }
}
