/**
 * examples/python/agent.py, built on the memgit package and the official `anthropic` package's tool runner (in
 * .venv-test, made when missing by test/support/python-venv.ts), talking to a spawned memgit server and to
 * the scripted Messages API: the tool_results Python sends back are byte for byte what store.execute answers;
 * commits via git CLI. Then the same example against `memgit sandbox`, without a key.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lastToolResults, ScriptedServer, ScriptStep } from '../../src/agent/scripted-server';
import { MemoryStore } from '../../src/store/memory-store';
import { expectRepository, gitReport, makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeKey, spawnServer, SpawnedServer } from '../server/spawn-server';
import { ensurePythonVenv } from '../support/python-venv';

const AGENT = path.join(REPO_ROOT, 'examples', 'python', 'agent.py');
const base = makeTempDir('memgit-python-');
const root = path.join(base, 'root');
let python: string;
let server: SpawnedServer;
let scripted: ScriptedServer;

beforeAll(async () => {
  // Made when missing; when it cannot be made this test fails (not a skip), saying why and how.
  python = await ensurePythonVenv();
  await ensureBuilt();
  fs.mkdirSync(root, { mode: 0o700 }); // a server root must be its user's alone (whatever the umask)
  server = await spawnServer(root);
}, 600_000);

afterAll(async () => {
  await scripted?.close();
  await server?.stop();
  removeDir(base);
});

const TURNS: Array<Array<[string, Record<string, unknown>]>> = [
  [['toolu_py01', { command: 'view', path: '/memories' }]],
  [
    ['toolu_py02', { command: 'create', path: '/memories/acme.md', file_text: 'Deploys on Fridays.\nÜmlaut ✓\n' }],
    ['toolu_py03', { command: 'str_replace', path: '/memories/acme.md', old_str: 'Mondays', new_str: 'x' }],
  ],
  [['toolu_py04', { command: 'insert', path: '/memories/acme.md', insert_line: 0, insert_text: '# Acme\n' }]],
];

function runPython(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [AGENT, ...args], { env, cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

it('a Python agent writes into a store through the server', async () => {
  const steps: ScriptStep[] = TURNS.map((turn) => ({ content: turn.map(([id, input]) => ({ type: 'tool_use' as const, id, name: 'memory', input })) }));
  steps.push({ content: [{ type: 'text', text: 'Noted: Fridays.' }] });
  scripted = await ScriptedServer.start(steps);
  const key = await makeKey(root, 'py-*', 'write');
  const session = 'sess_20261203T090000_py';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
    ANTHROPIC_BASE_URL: scripted.url,
    MEMGIT_URL: server.url,
    MEMGIT_KEY: key.key,
    MEMGIT_STORE: 'py-acme',
    MEMGIT_SESSION: session,
    MEMGIT_MODEL: 'claude-test',
  };
  const run = await runPython(env, ['Remember', 'Acme']);
  expect(run.code).toBe(0);
  expect(run.stdout).toBe('Noted: Fridays.\n');
  expect(run.stderr.replace(/commit [0-9a-f]{12}/g, 'commit C').split('\n')).toEqual([
    `session ${session}`,
    'memory view: ok (toolu_py01)',
    'memory create: ok, commit C (toolu_py02)',
    'memory str_replace: error (toolu_py03)',
    'memory insert: ok, commit C (toolu_py04)',
    '',
  ]);

  const requests = scripted.messageRequests;
  expect(requests).toHaveLength(TURNS.length + 1);
  expect(requests[0].body!.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
  const reference = await MemoryStore.open(path.join(base, 'reference'), QUIET);
  try {
    for (const [i, turn] of TURNS.entries()) {
      const expected = [];
      for (const [id, input] of turn) expected.push(await reference.execute(toolUse(id, input), { session }));
      expect(lastToolResults(requests[i + 1].body!)).toEqual(expected);
    }
  } finally {
    await reference.close();
  }
  // Every commit names the server key the calls came with (Memory-Key).
  expectRepository(gitReport(path.join(root, 'py-acme')), [
    { id: 'toolu_py02', command: 'create', path: '/memories/acme.md', session, key: key.id },
    { id: 'toolu_py04', command: 'insert', path: '/memories/acme.md', session, key: key.id },
  ]);
}, 120_000);

it('the Python example runs against memgit sandbox, without an API key', async () => {
  const sandbox: ChildProcess = spawn(process.execPath, [CLI_MAIN, 'sandbox', '--port', '0'], { cwd: REPO_ROOT });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      sandbox.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const match = /^ANTHROPIC_BASE_URL=(\S+)\n/.exec(out);
        if (match) resolve(match[1]);
      });
      sandbox.once('exit', (code) => reject(new Error(`memgit sandbox exited with ${code}`)));
    });
    const key = await makeKey(root, 'sandbox-*', 'write');
    const session = 'sess_20261203T100000_sandbox';
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ANTHROPIC_API_KEY: 'any-value-works',
      ANTHROPIC_BASE_URL: url,
      MEMGIT_URL: server.url,
      MEMGIT_KEY: key.key,
      MEMGIT_STORE: 'sandbox-py',
      MEMGIT_SESSION: session,
    };
    const run = await runPython(env, ['We', 'deploy', 'on', 'Fridays.']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'Let me check my memory first.\nNoted in /memories/notes.md: “We deploy on Fridays.” ' +
        '(memgit sandbox: a scripted stand-in for Claude; nothing left this machine.)\n',
    );
    const calls = [...run.stderr.matchAll(/^memory (\w+): ok(?:, commit [0-9a-f]{12})? \((toolu_01[A-Za-z0-9]{22})\)$/gm)];
    expect(calls.map((m) => m[1])).toEqual(['view', 'create']);
    // The call's message: its tool_use id, then its trailers (the server may add its own after them).
    const report = gitReport(path.join(root, 'sandbox-py'));
    expect([report.fsckCode, report.fsckOutput, report.status]).toEqual([0, '', '']);
    expect(report.commits).toHaveLength(2);
    expect(report.commits[1].message.startsWith(`${calls[1][2]}\n\nMemory-Command: create\nMemory-Path: /memories/notes.md\nMemory-Session: ${session}\n`)).toBe(true);
    expect(fs.readFileSync(path.join(root, 'sandbox-py', 'memories', 'notes.md'), 'utf8')).toBe('# Notes\n- We deploy on Fridays.\n');
  } finally {
    sandbox.kill('SIGTERM');
  }
}, 120_000);
