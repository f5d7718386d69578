/**
 * `memgit dream` as a user runs it: the built CLI spawned as a process, the SDK inside it talking HTTP to
 * the scripted Messages API on 127.0.0.1. A dream completes and its review is approved with
 * `memgit review approve`; a dream whose process is killed with SIGKILL mid-dream is failed
 * ("interrupted") the next time the store's dreams are read, with its branch intact.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { ScriptedServer } from '../../src/agent/scripted-server';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { cliEnv, runCli } from '../agent/run-cli';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];

function git(dir: string, ...args: string[]): string {
  const run = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

function apiEnv(url: string) {
  return cliEnv({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key' });
}

async function seededStore(): Promise<string> {
  const dir = makeTempDir('memgit-dream-cli-');
  dirs.push(dir);
  const repo = path.join(dir, 'store');
  const env = cliEnv();
  const create = (id: string, session: string, p: string, text: string) =>
    runCli(['exec', '--repo', repo, '--session', session], { env, input: `${JSON.stringify({ type: 'tool_use', id, name: 'memory', input: { command: 'create', path: p, file_text: text } })}\n` });
  expect((await create('toolu_a1', 'sess_a', '/memories/tea.md', '- Tea: green\n')).code).toBe(0);
  expect((await create('toolu_b1', 'sess_b', '/memories/tea-new.md', '- Tea: now black tea only\n')).code).toBe(0);
  return repo;
}

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  for (const close of closers) await close();
  dirs.forEach(removeDir);
});

it('memgit dream --max-turns 1: the dream fails over its budget of turns, exit 1, saying what stays on its branch; main untouched; a bad value is exit 64', async () => {
  const repo = await seededStore();
  const server = await ScriptedServer.start([
    { content: [{ type: 'tool_use', id: 'toolu_m1', name: 'memory', input: { command: 'create', path: '/memories/merged.md', file_text: '- Tea: black\n' } }] },
    { content: [{ type: 'text', text: 'never asked for' }] },
  ]);
  closers.push(() => server.close());
  const head = git(repo, 'rev-parse', 'HEAD').trim();
  const run = await runCli(['dream', '--repo', repo, '--session', 'sess_a', '--model', 'claude-test-model', '--max-turns', '1', '--json'], { env: apiEnv(server.url) });
  expect(run.code).toBe(1);
  const dream = JSON.parse(run.stdout);
  expect(dream).toMatchObject({ status: 'failed', outputs: [], error: { type: 'budget_exceeded' } });
  expect(dream.error.message).toContain('still wanted tools after 1 turns (its budget of turns, --max-turns)');
  expect(dream.error.message).toContain(`The 1 call(s) it wrote (1 file(s)) stay on its branch refs/heads/dream/${dream.id}, which is not a review`);
  expect(server.messageRequests).toHaveLength(1);
  expect(git(repo, 'rev-parse', 'HEAD').trim()).toBe(head);
  expect(git(repo, 'show', `refs/heads/dream/${dream.id}:memories/merged.md`)).toBe('- Tea: black\n');
  const shown = await runCli(['dream', 'show', dream.id, '--repo', repo], { env: cliEnv() });
  expect(shown.stdout).toContain('failed');
  expect(shown.stdout).toContain('budget_exceeded');
  for (const bad of ['0', 'many']) {
    const refused = await runCli(['dream', '--repo', repo, '--session', 'sess_a', '--max-turns', bad], { env: apiEnv(server.url) });
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain("option '--max-turns <n>' argument");
  }
  expect(server.messageRequests).toHaveLength(1);
});

it('memgit dream runs to completion, prints the dream object, and its review is approved', async () => {
  const repo = await seededStore();
  const server = await ScriptedServer.start([
    { content: [{ type: 'tool_use', id: 'toolu_x1', name: 'session_read', input: { session_id: 'sess_b' } }] },
    {
      content: [
        { type: 'tool_use', id: 'toolu_x2', name: 'memory', input: { command: 'str_replace', path: '/memories/tea.md', old_str: '- Tea: green', new_str: '- Tea: black only (per session sess_b)' } },
        { type: 'tool_use', id: 'toolu_x3', name: 'memory', input: { command: 'delete', path: '/memories/tea-new.md' } },
      ],
    },
    { content: [{ type: 'text', text: 'Merged.' }] },
  ]);
  closers.push(() => server.close());
  const run = await runCli(['dream', '--repo', repo, '--session', 'sess_a', '--session', 'sess_b', '--model', 'claude-test-model', '--json'], { env: apiEnv(server.url) });
  expect(run.stderr).toContain('turn 1');
  expect(run.stderr).toContain('memory str_replace /memories/tea.md (toolu_x2)');
  expect(run.code).toBe(0);
  const dream = JSON.parse(run.stdout);
  expect(dream).toMatchObject({ type: 'dream', status: 'completed', model: 'claude-test-model', error: null, inputs: [{ type: 'sessions', session_ids: ['sess_a', 'sess_b'] }] });
  expect(dream.outputs[0].files_touched).toEqual(['/memories/tea-new.md', '/memories/tea.md']);
  expect(git(repo, 'show', 'HEAD:memories/tea.md')).toBe('- Tea: green\n');

  const list = await runCli(['dream', 'list', '--repo', repo], { env: cliEnv() });
  expect(list.stdout).toContain(`${dream.id}  completed`);
  const approve = await runCli(['review', 'approve', dream.outputs[0].review_id, '--repo', repo, '--operator', 'dana'], { env: cliEnv() });
  expect(approve.stderr).toBe('');
  expect(approve.stdout).toContain('2 call(s) on main');
  expect(git(repo, 'show', 'HEAD:memories/tea.md')).toBe('- Tea: black only (per session sess_b)\n');
  expect(git(repo, 'log', '-1', '--format=%B', 'HEAD')).toContain(`Memory-Dream: ${dream.id}`);

  // Without a key: refused before anything starts.
  const noKey = await runCli(['dream', '--repo', repo], { env: cliEnv() });
  expect(noKey.code).toBe(1);
  expect(noKey.stderr).toContain('ANTHROPIC_API_KEY');
  const bad = await runCli(['dream', '--repo', repo, '--instructions', 'x'.repeat(4097)], { env: apiEnv(server.url) });
  expect(bad.code).toBe(64);
  expect(bad.stderr).toContain('at most 4096');
});

it('kill -9 mid-dream: the dream is failed ("interrupted") when the store\'s dreams are next read, its branch intact', async () => {
  const repo = await seededStore();
  // The first request gets a memory write; the second is never answered (the process is killed meanwhile).
  let requests = 0;
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      if (requests > 1) {
        hanging.push(res);
        return;
      }
      const message = {
        id: 'msg_kill_1', type: 'message', role: 'assistant', model: 'claude-test-model', stop_reason: 'tool_use', stop_sequence: null,
        content: [{ type: 'tool_use', id: 'toolu_k1', name: 'memory', input: { command: 'create', path: '/memories/summary.md', file_text: '- Tea: black\n' } }],
        usage: { input_tokens: 10, output_tokens: 5 },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closers.push(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const child = spawn(process.execPath, [CLI_MAIN, 'dream', '--repo', repo, '--model', 'claude-test-model'], { env: apiEnv(url), cwd: REPO_ROOT, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  // Wait until the second request is waiting: the first call is committed on the dream's branch by then.
  while (requests < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');

  const dreamsDir = path.join(repo, '.git', 'memgit', 'dreams');
  const [file] = fs.readdirSync(dreamsDir).filter((f) => f.endsWith('.json'));
  const id = file.replace(/\.json$/, '');
  expect(JSON.parse(fs.readFileSync(path.join(dreamsDir, file), 'utf8')).status).toBe('running');
  const tip = git(repo, 'rev-parse', `refs/heads/dream/${id}`).trim();
  expect(git(repo, 'log', '-1', '--format=%s%n%b', tip)).toContain(`toolu_k1\nMemory-Command: create`);

  const list = await runCli(['dream', 'list', '--repo', repo, '--json'], { env: cliEnv() });
  expect(list.code).toBe(0);
  const dream = JSON.parse(list.stdout.trim());
  expect(dream).toMatchObject({ id, status: 'failed', error: { type: 'interrupted' } });
  expect(dream.error.message).toContain('interrupted');
  expect(dream.ended_at).not.toBeNull();
  // The branch is kept as it was; main never moved; a new dream may start.
  expect(git(repo, 'rev-parse', `refs/heads/dream/${id}`).trim()).toBe(tip);
  expect(git(repo, 'log', '-1', '--format=%s', 'HEAD').trim()).toBe('toolu_b1');
  const show = await runCli(['dream', 'show', id, '--repo', repo], { env: cliEnv() });
  expect(show.stdout).toContain('failed');
  expect(spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: repo, encoding: 'utf8' }).status).toBe(0);
});
