/**
 * One casing for memgit's own JSON: every `--json` output of the CLI names its fields in camelCase, as
 * the documented records do (docs/records.md). The Messages API's snake_case appears only inside
 * Anthropic-shaped blocks (the tool_result blocks `memgit exec` prints), never in memgit's own records.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

const CAMEL = /^[a-z][a-zA-Z0-9]*$/;
const SECRET = 'sk-ant-api03-Zq7XvN2pL9wR4tY8uI1oP5aS3dF6gH0jK';
const dirs: string[] = [];
let repo: string;

function memgit(args: string[], input = '') {
  const env: NodeJS.ProcessEnv = { ...process.env, SECRET };
  delete env.MEMGIT_REPO;
  return spawnSync(process.execPath, [CLI_MAIN, ...args], { input, encoding: 'utf8', env, cwd: REPO_ROOT });
}

function toolUse(id: string, input: unknown): string {
  return JSON.stringify({ type: 'tool_use', id, name: 'memory', input });
}

/** Field names that are not camelCase, with where they are; data-keyed maps (old → new ids) are values. */
function offCase(value: unknown, where = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => offCase(v, `${where}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const bad: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (!CAMEL.test(key)) bad.push(`${where}.${key}`);
    if (key !== 'map') bad.push(...offCase(inner, `${where}.${key}`));
  }
  return bad;
}

function jsonLines(stdout: string): unknown[] {
  return stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

beforeAll(async () => {
  await ensureBuilt();
  repo = makeTempDir('memgit-casing-');
  dirs.push(repo);
  const made = memgit(['exec', '--repo', repo, '--session', 'sess_case'], [
    toolUse('toolu_c1', { command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\n' }),
    toolUse('toolu_c2', { command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: `two ${SECRET}` }),
    toolUse('toolu_c3', { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }),
    toolUse('toolu_c4', { command: 'create', path: '/memories/c.md', file_text: 'three\n' }),
  ].join('\n') + '\n');
  expect(made.status).toBe(0);
  // Anthropic-shaped blocks keep the Messages API's names.
  expect(jsonLines(made.stdout)[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_c1' });
}, 120_000);

afterAll(() => dirs.forEach(removeDir));

test('every --json output of the CLI uses camelCase field names', () => {
  const importDir = path.join(makeTempDir('memgit-casing-import-'), 'memories');
  dirs.push(path.dirname(importDir));
  fs.mkdirSync(importDir);
  fs.writeFileSync(path.join(importDir, 'x.md'), 'x\n');
  const keysRoot = makeTempDir('memgit-casing-keys-');
  dirs.push(keysRoot);
  const r = ['--repo', repo];
  const commands: string[][] = [
    ['log', ...r, '--json'],
    ['show', 'toolu_c2', ...r, '--json'],
    ['cat', '/memories/b.md', ...r, '--json'],
    ['ls', ...r, '--json'],
    ['diff', 'toolu_c1', 'toolu_c4', ...r, '--json'],
    ['blame', '/memories/b.md', ...r, '--json'],
    ['sessions', ...r, '--json'],
    ['status', ...r, '--json'],
    ['flags', ...r, '--json'],
    ['revert', 'toolu_c4', ...r, '--dry-run', '--json'],
    ['restore', '/memories/c.md', '--at', 'toolu_c4', ...r, '--dry-run', '--json'],
    ['reset', '--to', 'toolu_c1', ...r, '--dry-run', '--json'],
    ['rollback-session', 'sess_case', ...r, '--dry-run', '--json'],
    ['import', importDir, ...r, '--dry-run', '--json'],
    ['redact', '--text-env', 'SECRET', '--reason', 'casing', ...r, '--dry-run', '--json'],
    ['redact', '--text-env', 'SECRET', '--reason', 'casing', ...r, '--json'],
    ['redactions', ...r, '--json'],
    ['verify-redaction', 'r1', '--text-env', 'SECRET', ...r, '--json'],
    ['remote', 'add', 'backup', 'http://127.0.0.1:9/none.git', ...r],
    ['remote', 'list', ...r, '--json'],
    ['gc', ...r, '--json'],
    ['keys', 'create', '--root', keysRoot, '--stores', 'acme-*', '--scope', 'read', '--json'],
    ['keys', 'list', '--root', keysRoot, '--json'],
  ];
  const found: Record<string, string[]> = {};
  for (const args of commands) {
    const result = memgit(args);
    expect([args.join(' '), result.status]).toEqual([args.join(' '), 0]);
    if (!args.includes('--json')) continue;
    const bad = jsonLines(result.stdout).flatMap((v) => offCase(v));
    if (bad.length) found[args.slice(0, 2).join(' ')] = bad;
  }
  expect(found).toEqual({});
});
