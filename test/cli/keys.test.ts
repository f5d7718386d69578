/** `memgit keys list` as an operator reads it: a header, aligned columns, and what each key may do in words. */
import { spawnSync } from 'node:child_process';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

let root: string;

function memgit(args: string[]) {
  return spawnSync(process.execPath, [CLI_MAIN, ...args, '--root', root], { encoding: 'utf8', cwd: REPO_ROOT });
}

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('memgit-keys-');
});

afterAll(() => removeDir(root));

test('keys list: a header, then each key with what it may do, never "no-create" for a read key', () => {
  expect(memgit(['keys', 'list']).stderr).toBe('memgit: no keys yet (memgit keys create --stores PATTERN --scope write)\n');
  const made = (...args: string[]) => {
    const result = memgit(['keys', 'create', '--json', ...args]);
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout).info.id as string;
  };
  const reader = made('--stores', 'acme-*', '--scope', 'read');
  const writer = made('--stores', 'acme-*,beta', '--scope', 'write', '--no-create', '--note', 'ci runner');
  const operator = made('--stores', '*', '--scope', 'operator');
  expect(memgit(['keys', 'revoke', writer]).status).toBe(0);
  const list = memgit(['keys', 'list']);
  expect(list.status).toBe(0);
  const lines = list.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^ID +SCOPE +STORES +MAY +CREATED +STATE +NOTE$/);
  const column = (name: string) => lines[0].indexOf(name);
  const row = (id: string) => lines.find((l) => l.startsWith(id))!;
  expect(row(reader).slice(column('MAY'))).toMatch(/^read history +\S+Z +live$/);
  expect(row(writer).slice(column('MAY'))).toMatch(/^read history, write memory +\S+Z +revoked \S+Z +ci runner$/);
  expect(row(operator).slice(column('MAY'))).toMatch(/^read history, write memory, roll back, create stores +\S+Z +live$/);
  for (const id of [reader, writer, operator]) expect(row(id).slice(column('SCOPE'))).toMatch(/^(read|write|operator) /);
  expect(list.stdout).not.toContain('no-create');
});
