/**
 * The Python package's own tests (clients/python/tests, pytest), run by `npm test`: in a virtual environment
 * with `pip install './clients/python[anthropic]' pytest` (made when missing, test/support/python-venv.ts),
 * against a real `memgit server` (the built CLI, keys made with `memgit keys`) and memgit's scripted Messages
 * API, which the pytest tests script through a small control API served here and which records what the
 * official Python SDK sent, and the sandbox's conversation for the Python blocks of docs/python.md. The
 * pytest tests check the texts the model received and the commits, with git.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { startSandbox } from '../../src/agent/sandbox';
import { ScriptedServer, ScriptStep } from '../../src/agent/scripted-server';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CONFORMANCE_DIR } from '../contract/harness';
import { ensureBuilt, REPO_ROOT } from '../support/dist';
import { ensurePythonVenv, PACKAGE_DIR } from '../support/python-venv';
import { makeKey, spawnServer, SpawnedServer } from '../server/spawn-server';

const base = makeTempDir('memgit-python-client-');
const root = path.join(base, 'root');
const limitedRoot = path.join(base, 'limited');
let python: string;
let server: SpawnedServer;
let limited: SpawnedServer;
let scripted: ScriptedServer;
let sandbox: ScriptedServer;
let control: http.Server;
let controlUrl: string;

/**
 * The control API of the scripted server, for the pytest tests: `POST /script {"steps": [...]}` sets the
 * model's next replies (the previous script must be used up) and forgets the recorded requests; `GET
 * /requests` answers the bodies of the Messages requests since then, and how many steps remain.
 */
function startControl(target: ScriptedServer): Promise<string> {
  control = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const answer = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && req.url === '/script') {
        if (target.remaining !== 0) return answer(409, { error: `${target.remaining} scripted steps of the previous script are unused` });
        target.requests.length = 0;
        target.push(...(JSON.parse(raw) as { steps: ScriptStep[] }).steps);
        return answer(200, { remaining: target.remaining });
      }
      if (req.method === 'GET' && req.url === '/requests') {
        return answer(200, { remaining: target.remaining, requests: target.messageRequests.map((r) => r.body) });
      }
      answer(404, { error: `no control route ${req.method} ${req.url}` });
    });
  });
  return new Promise((resolve) => control.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(control.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  // Made when missing; when it cannot be made this test fails (not a skip), saying why and how.
  python = await ensurePythonVenv();
  await ensureBuilt();
  // Only its owner may enter a server root (the server refuses one open to others).
  fs.mkdirSync(root, { mode: 0o700 });
  fs.mkdirSync(limitedRoot, { mode: 0o700 });
  server = await spawnServer(root);
  limited = await spawnServer(limitedRoot, ['--rate-limit', '1']);
  scripted = await ScriptedServer.start();
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  controlUrl = await startControl(scripted);
}, 600_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (control ? control.close(() => resolve()) : resolve()));
  await scripted?.close();
  await sandbox?.close();
  await server?.stop();
  await limited?.stop();
  removeDir(base);
});

function runPytest(env: NodeJS.ProcessEnv, junit: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const args = ['-m', 'pytest', path.join(PACKAGE_DIR, 'tests'), '-p', 'no:cacheprovider', '-q', '-rfEs', `--junitxml=${junit}`];
    const child = spawn(python, args, { env, cwd: REPO_ROOT });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

it('the Python package passes its pytest suite against a real server, through the SDK tool runner', async () => {
  const write = await makeKey(root, 'py-*', 'write');
  const read = await makeKey(root, 'py-*', 'read');
  const limitedKey = await makeKey(limitedRoot, '*', 'read');
  const junit = path.join(base, 'junit.xml');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PYTHONDONTWRITEBYTECODE: '1',
    MEMGIT_TEST_URL: server.url,
    MEMGIT_TEST_ROOT: root,
    MEMGIT_TEST_WRITE_KEY: write.key,
    MEMGIT_TEST_READ_KEY: read.key,
    MEMGIT_TEST_LIMITED_URL: limited.url,
    MEMGIT_TEST_LIMITED_KEY: limitedKey.key,
    MEMGIT_TEST_ANTHROPIC_URL: scripted.url,
    MEMGIT_TEST_CONTROL_URL: controlUrl,
    MEMGIT_TEST_VECTORS: path.join(CONFORMANCE_DIR, 'vectors.json'),
    MEMGIT_TEST_SANDBOX_URL: sandbox.url,
    MEMGIT_TEST_PYTHON_GUIDE: path.join(REPO_ROOT, 'docs', 'python.md'),
  };
  const run = await runPytest(env, junit);
  if (run.code !== 0) throw new Error(`pytest failed (exit ${run.code}):\n${run.output}`);
  // Every test ran and passed: none skipped, none deselected, and the suite is the one we expect.
  const report = fs.readFileSync(junit, 'utf8');
  const suite = /<testsuite [^>]*>/.exec(report)![0];
  const count = (name: string) => Number(new RegExp(`${name}="(\\d+)"`).exec(suite)![1]);
  expect({ errors: count('errors'), failures: count('failures'), skipped: count('skipped') }).toEqual({ errors: 0, failures: 0, skipped: 0 });
  const names = [...report.matchAll(/<testcase [^>]*name="([^"]+)"/g)].map((m) => m[1]);
  expect(names).toEqual(
    expect.arrayContaining([
      'test_the_runner_sends_the_contract_texts_and_every_write_is_a_commit_named_by_its_tool_use_id[sync]',
      'test_the_runner_sends_the_contract_texts_and_every_write_is_a_commit_named_by_its_tool_use_id[async]',
      'test_the_runner_sends_the_contract_texts_and_every_write_is_a_commit_named_by_its_tool_use_id[sync-stream]',
      'test_the_runner_sends_the_contract_texts_and_every_write_is_a_commit_named_by_its_tool_use_id[async-stream]',
      'test_every_conformance_vector_through_the_sync_runner_gives_the_model_the_exact_text',
      'test_every_conformance_vector_through_the_async_streaming_runner_gives_the_model_the_exact_text',
      'test_the_read_api',
      'test_503_and_429_are_retried_with_the_same_id_after_retry_after[sync]',
      'test_a_lost_answer_is_retried_and_the_call_applied_once[async]',
      'test_every_python_block_of_the_guide_runs',
    ]),
  );
  expect(count('tests')).toBe(names.length);
  expect(names.length).toBeGreaterThanOrEqual(25);
}, 600_000);
