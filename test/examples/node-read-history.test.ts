/**
 * examples/node/read-history.mjs, as a user runs it (`node examples/node/read-history.mjs`, importing the
 * built package by its name), against a spawned memgit server: the sessions and calls it prints are the
 * ones made over HTTP, the blame of a file names the calls that wrote its lines, and a refused key ends it
 * with the server's code and exit 1.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeKey, postToolCall, spawnServer, SpawnedServer } from '../server/spawn-server';

let dir: string;
let server: SpawnedServer;
const commits: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  dir = makeTempDir('memgit-node-example-');
  const root = path.join(dir, 'root');
  server = await spawnServer(root);
  const { key } = await makeKey(root, 'acme-*', 'write');
  const calls = [
    ['toolu_e1', 'sess_a', { command: 'create', path: '/memories/notes.md', file_text: 'tabs\nshort answers\n' }],
    ['toolu_e2', 'sess_b', { command: 'str_replace', path: '/memories/notes.md', old_str: 'tabs', new_str: 'spaces' }],
  ] as const;
  for (const [id, session, input] of calls) {
    const answer = await postToolCall(server.url, 'acme-1', key, { tool_use: toolUse(id, input), session });
    expect(answer.status).toBe(200);
    commits.push((JSON.parse(answer.text) as { commit: string }).commit);
  }
});

afterAll(async () => {
  await server?.stop();
  removeDir(dir);
});

const runExample = (key: string, ...args: string[]) =>
  spawnSync(process.execPath, [path.join('examples', 'node', 'read-history.mjs'), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, MEMGIT_URL: server.url, MEMGIT_KEY: key },
  });

it('prints every session with its calls, and the blame of a file', async () => {
  const { key } = await makeKey(path.join(dir, 'root'), 'acme-*', 'read');
  const run = runExample(key, 'acme-1', 'notes.md');
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const time = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(7);
  // Two sessions (in the server's order: the latest first), each followed by its calls.
  const blocks = new Map([0, 2].map((at) => [lines[at].split(':')[0], lines.slice(at, at + 2)]));
  expect([...blocks.keys()].sort()).toEqual(['session sess_a', 'session sess_b']);
  expect(blocks.get('session sess_a')![0]).toMatch(new RegExp(`^session sess_a: 1 commit, ${time} \\.\\. ${time}$`));
  expect(blocks.get('session sess_a')![1]).toBe(`  toolu_e1 create /memories/notes.md (+2 -0) ${commits[0].slice(0, 10)}`);
  expect(blocks.get('session sess_b')![0]).toMatch(/^session sess_b: 1 commit, /);
  expect(blocks.get('session sess_b')![1]).toBe(`  toolu_e2 str_replace /memories/notes.md (+1 -1) ${commits[1].slice(0, 10)}`);
  expect(lines.slice(4)).toEqual([`/memories/notes.md at ${commits[1].slice(0, 10)}:`, '  toolu_e2\t1\tspaces', '  toolu_e1\t2\tshort answers']);
});

it('ends with the server code and exit 1 when the key is refused', () => {
  const run = runExample('mgk_not_a_key', 'acme-1');
  expect(run.stdout).toBe('');
  expect(run.stderr).toBe('read-history: unauthorized: memgit server answered 401 to GET /api/v1/stores/acme-1/sessions: this key is not valid (unknown or revoked)\n');
  expect(run.status).toBe(1);
});
