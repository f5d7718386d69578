/**
 * The Python tests make their virtual environment themselves (test/support/python-venv.ts), so `npm test`
 * passes on a fresh clone with nothing run before it: here in a fresh folder, asked for by two callers at
 * once (as parallel test files do), made again when the package's sources change, and, when it cannot be
 * made, as a failure that says how to make it. (From a copy of clients/python, so that its sources can be
 * changed here.)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { ensurePythonVenv, PACKAGE_DIR, venvPython, venvShim } from '../support/python-venv';

const base = makeTempDir('memgit-venv-');
const packageDir = path.join(base, 'python');
const dir = path.join(base, 'venv');
const noPython: NodeJS.ProcessEnv = { PATH: path.join(base, 'empty') }; // no python3 to be found
/** pip without byte-compiling what it installs (--no-compile): these environments are only imported from once. */
const pipEnv: NodeJS.ProcessEnv = { ...process.env, PIP_COMPILE: '0' };
beforeAll(() => fs.cpSync(PACKAGE_DIR, packageDir, { recursive: true, filter: (source) => !/(^|\/)(build|__pycache__|[^/]*\.egg-info)$/.test(source) }));
afterAll(() => removeDir(base));

function pythonSays(code: string): { stdout: string; stderr: string } {
  const check = spawnSync(venvPython(dir), ['-c', code], { encoding: 'utf8' });
  return { stdout: check.stdout.trim(), stderr: check.stderr };
}

it('makes the environment in a fresh folder once, for two callers at the same time', async () => {
  const [first, second] = await Promise.all([ensurePythonVenv(dir, pipEnv, packageDir), ensurePythonVenv(dir, pipEnv, packageDir)]);
  expect(first).toBe(venvPython(dir));
  expect(second).toBe(first);
  expect(pythonSays('import memgit, memgit.memory_tool, anthropic, pytest, sys; print(sys.prefix)')).toEqual({ stdout: fs.realpathSync(dir), stderr: '' });
  expect(fs.readdirSync(dir)).not.toContain('.memgit-setup.lock'); // released
  expect(fs.readdirSync(dir)).not.toContain('.memgit-package'); // the build copy is gone
  // Made: the next caller finds it without running pip again (it would fail with no python3 on PATH).
  await expect(ensurePythonVenv(dir, noPython, packageDir)).resolves.toBe(first);
}, 600_000);

it('installs the package again when its sources change', async () => {
  fs.appendFileSync(path.join(packageDir, 'src', 'memgit', '__init__.py'), '\nREBUILT_BY_THE_TEST = "yes"\n');
  expect(pythonSays('import memgit; print(hasattr(memgit, "REBUILT_BY_THE_TEST"))').stdout).toBe('False');
  await expect(ensurePythonVenv(dir, pipEnv, packageDir)).resolves.toBe(venvPython(dir));
  expect(pythonSays('import memgit; print(memgit.REBUILT_BY_THE_TEST)')).toEqual({ stdout: 'yes', stderr: '' });
  // And not again while they stay as they are.
  await expect(ensurePythonVenv(dir, noPython, packageDir)).resolves.toBe(venvPython(dir));
}, 600_000);

it('fails, saying why and how to make it by hand, when it cannot be made', async () => {
  const missing = path.join(base, 'no-python');
  const attempt = ensurePythonVenv(missing, noPython, packageDir);
  await expect(attempt).rejects.toThrow(
    /The Python tests need a virtual environment in .*no-python with pip install \.\/clients\/python\[anthropic\] pytest; `python3 -m venv [^`]*` failed:\npython3: not found on PATH\n[^]*By hand, from the checkout: python3 -m venv \.venv-test && \.venv-test\/bin\/pip install '\.\/clients\/python\[anthropic\]' 'pytest'/,
  );
  expect(fs.existsSync(venvPython(missing))).toBe(false);
  expect(fs.readdirSync(missing)).not.toContain('.memgit-setup.lock'); // released after the failure too
});

it("without ensurepip, the tests' own python3 makes an environment with pip: without pip first, then the system pip installs it", () => {
  const dir = makeTempDir('memgit-venv-shim-');
  try {
    const real = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();
    fs.writeFileSync(path.join(dir, 'python3'), venvShim(real), { mode: 0o755 });
    const made = spawnSync(path.join(dir, 'python3'), ['-m', 'venv', path.join(dir, 'env')], { encoding: 'utf8', timeout: 120_000 });
    if (made.status !== 0) throw new Error(`the shim failed (${made.status}): ${made.stderr}`);
    expect(made.status).toBe(0);
    const pip = spawnSync(path.join(dir, 'env', 'bin', 'pip'), ['--version'], { encoding: 'utf8' });
    expect(pip.status).toBe(0);
    expect(pip.stdout).toContain(path.join(dir, 'env'));
    // Anything else goes to the real python3 unchanged.
    expect(spawnSync(path.join(dir, 'python3'), ['-c', 'print(6 * 7)'], { encoding: 'utf8' }).stdout.trim()).toBe('42');
  } finally {
    removeDir(dir);
  }
}, 180_000);
