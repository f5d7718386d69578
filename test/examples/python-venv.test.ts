/**
 * The Python tests make their virtual environment themselves (test/support/python-venv.ts), so `npm test`
 * passes on a fresh clone with nothing run before it: here in a fresh folder, asked for by two callers at
 * once (as parallel test files do), and, when it cannot be made, as a failure that says how to make it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { ensurePythonVenv, venvPython } from '../support/python-venv';

const base = makeTempDir('memgit-venv-');
afterAll(() => removeDir(base));

it('makes the environment in a fresh folder once, for two callers at the same time', async () => {
  const dir = path.join(base, 'venv');
  const [first, second] = await Promise.all([ensurePythonVenv(dir), ensurePythonVenv(dir)]);
  expect(first).toBe(venvPython(dir));
  expect(second).toBe(first);
  const check = spawnSync(first, ['-c', 'import anthropic, sys; print(sys.prefix)'], { encoding: 'utf8' });
  expect(check.stderr).toBe('');
  expect(check.stdout.trim()).toBe(fs.realpathSync(dir));
  expect(fs.readdirSync(dir)).not.toContain('.memgit-setup.lock'); // released
  // Made: the next caller finds it without running pip again (it would fail with no python3 on PATH).
  await expect(ensurePythonVenv(dir, { PATH: path.join(base, 'empty') })).resolves.toBe(first);
}, 300_000);

it('fails, saying why and how to make it by hand, when it cannot be made', async () => {
  const dir = path.join(base, 'no-python');
  const attempt = ensurePythonVenv(dir, { PATH: path.join(base, 'empty') }); // no python3 to be found
  await expect(attempt).rejects.toThrow(/The Python tests need a virtual environment with the anthropic package in .*no-python; making it failed:\n[^]*python3: not found[^]*Make it by hand with \.\/scripts\/python-venv\.sh/);
  expect(fs.existsSync(venvPython(dir))).toBe(false);
});
