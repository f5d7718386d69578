/**
 * `memgit sandbox`: the scripted Messages API with a conversation that answers any conversation. Run as
 * users run it (the built CLI as a process), with `memgit chat` against it end to end, streamed and not;
 * and in process with the official TypeScript SDK's tool runner and `store.memoryTool()`, as a TypeScript
 * program would use it. Commits are checked with the real git CLI. (The Python example against the sandbox
 * is in test/examples/python.test.ts.)
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { lastToolResults, ScriptedServer } from '../../src/agent/scripted-server';
import { SANDBOX_NOTES, sandboxReply, sandboxResponder } from '../../src/agent/sandbox';
import { MemoryStore } from '../../src/store/memory-store';
import { expectRepository, gitReport, makeTempDir, QUIET, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { cliEnv, runCli } from './run-cli';

const base = makeTempDir('memgit-sandbox-');
const children: ChildProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 240_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  removeDir(base);
});

interface RunningSandbox {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startSandbox(args: string[] = []): Promise<RunningSandbox> {
  const child = spawn(process.execPath, [CLI_MAIN, 'sandbox', '--port', '0', ...args], { cwd: REPO_ROOT, env: cliEnv() });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // Ready once both are out: the URL on stdout, the instructions (ending with how to stop it) on stderr.
    const ready = () => {
      const match = /^ANTHROPIC_BASE_URL=(http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
      if (match && err.includes('Ctrl-C stops it.\n')) resolve({ url: match[1], child, stderr: () => err, exited });
    };
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      ready();
    });
    child.stderr!.on('data', ready);
    void exited.then((code) => reject(new Error(`memgit sandbox exited with ${code}: ${err}`)));
  });
}

/** The tool_use ids `memgit chat` printed on stderr for each memory call, with the command. */
function callsOf(stderr: string): Array<{ command: string; path: string; id: string; commit: boolean }> {
  return [...stderr.matchAll(/^memory (\w+) (\S+): ok(, commit [0-9a-f]+)? \((toolu_01[A-Za-z0-9]{22})\)$/gm)].map((m) => ({
    command: m[1],
    path: m[2],
    commit: m[3] !== undefined,
    id: m[4],
  }));
}

describe('memgit sandbox with memgit chat', () => {
  let sandbox: RunningSandbox;
  const repo = path.join(base, 'chat-store');

  beforeAll(async () => {
    sandbox = await startSandbox();
  });

  test('prints the base URL on stdout and how to use it on stderr', () => {
    expect(sandbox.stderr()).toContain(`export ANTHROPIC_BASE_URL=${sandbox.url} ANTHROPIC_API_KEY=sandbox`);
    expect(sandbox.stderr()).toContain('Any API key value works');
  });

  test('two conversations, streamed and not: views, a create then an insert, commits named by the tool_use ids', async () => {
    const env = cliEnv({ ANTHROPIC_BASE_URL: sandbox.url, ANTHROPIC_API_KEY: 'anything-at-all' });
    const first = await runCli(['chat', '--repo', repo, '--session', 'sess_sandbox_1', 'Remember that I prefer tabs.'], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      'Let me check my memory first.\nNoted in /memories/notes.md: “Remember that I prefer tabs.” ' +
        '(memgit sandbox: a scripted stand-in for Claude; nothing left this machine.)\n',
    );
    const second = await runCli(['chat', '--repo', repo, '--session', 'sess_sandbox_2', '--no-stream', 'We deploy on\n Fridays.'], { env });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Noted in /memories/notes.md: “We deploy on Fridays.”');

    const calls1 = callsOf(first.stderr);
    const calls2 = callsOf(second.stderr);
    expect(calls1.map((c) => [c.command, c.path, c.commit])).toEqual([
      ['view', '/memories', false],
      ['create', SANDBOX_NOTES, true],
    ]);
    expect(calls2.map((c) => [c.command, c.path, c.commit])).toEqual([
      ['view', '/memories', false],
      ['insert', SANDBOX_NOTES, true],
    ]);
    expect(new Set([...calls1, ...calls2].map((c) => c.id)).size).toBe(4);
    expectRepository(gitReport(repo), [
      { id: calls1[1].id, command: 'create', path: SANDBOX_NOTES, session: 'sess_sandbox_1' },
      { id: calls2[1].id, command: 'insert', path: SANDBOX_NOTES, session: 'sess_sandbox_2' },
    ]);
    expect(fs.readFileSync(path.join(repo, 'memories', 'notes.md'), 'utf8')).toBe('# Notes\n- We deploy on Fridays.\n- Remember that I prefer tabs.\n');
  }, 120_000);

  test('an interactive conversation: one exchange per line', async () => {
    const env = cliEnv({ ANTHROPIC_BASE_URL: sandbox.url, ANTHROPIC_API_KEY: 'x' });
    const run = await runCli(['chat', '--repo', path.join(base, 'interactive')], { env, input: 'first note\nsecond note\n/exit\n' });
    expect(run.code).toBe(0);
    expect(callsOf(run.stderr).map((c) => c.command)).toEqual(['view', 'create', 'view', 'insert']);
    expect(fs.readFileSync(path.join(base, 'interactive', 'memories', 'notes.md'), 'utf8')).toBe('# Notes\n- second note\n- first note\n');
  }, 120_000);

  test('Ctrl-C (SIGINT) stops it, exit 0', async () => {
    sandbox.child.kill('SIGINT');
    expect(await sandbox.exited).toBe(0);
    expect(sandbox.stderr()).toContain('memgit: sandbox: SIGINT, stopping');
  });
});

describe('memgit sandbox refuses what it cannot do', () => {
  test('a host that is not loopback is a usage error', async () => {
    const run = await runCli(['sandbox', '--host', '0.0.0.0'], { env: cliEnv() });
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('the sandbox serves loopback only');
  });

  test('memgit chat without a key points to the sandbox', async () => {
    const run = await runCli(['chat', '--repo', path.join(base, 'no-key'), 'hi'], { env: cliEnv() });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('or chat with a scripted stand-in: `memgit sandbox`.');
  });

  test('a port in use: a clear error, exit 1', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const run = await runCli(['sandbox', '--port', String(port)], { env: cliEnv() });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`memgit: cannot listen on 127.0.0.1:${port}: port ${port} is in use (pick another with --port, or --port 0 for any free one)\n`);
      expect(run.stdout).toBe('');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

describe('the sandbox conversation with the TypeScript SDK tool runner', () => {
  let server: ScriptedServer;
  let store: MemoryStore;
  const ID = /^toolu_01[A-Za-z0-9]{22}$/;
  const LISTING = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories";
  const SIGNED = '(memgit sandbox: a scripted stand-in for Claude; nothing left this machine.)';

  beforeAll(async () => {
    server = await ScriptedServer.start();
    server.respondWith(sandboxResponder());
    store = await MemoryStore.open(path.join(base, 'ts-store'), QUIET);
  });

  afterAll(async () => {
    await store.close();
    await server.close();
  });

  test('store.memoryTool() in client.beta.messages.toolRunner, threaded (the SDK default) and not', async () => {
    const client = new Anthropic({ apiKey: 'any-value', baseURL: server.url });
    const session = 'sess_sandbox_ts';
    const threaded = await client.beta.messages.toolRunner({
      model: 'claude-test',
      max_tokens: 512,
      messages: [{ role: 'user', content: 'I prefer spaces.' }],
      tools: [store.memoryTool({ session })],
    });
    expect(threaded.content).toEqual([{ type: 'text', text: `Noted in /memories/notes.md: “I prefer spaces.” ${SIGNED}` }]);
    const requests = server.messageRequests;
    expect(requests).toHaveLength(3);
    // The SDK sent only the new messages, continuing the thread the sandbox held.
    expect(requests[1].body!.thread).toEqual({ type: 'continue', previous_message_id: expect.stringMatching(/^msg_01/) });
    expect(requests[1].body!.messages).toHaveLength(1);
    expect(lastToolResults(requests[1].body!)).toEqual([{ type: 'tool_result', tool_use_id: expect.stringMatching(ID), content: LISTING }]);
    const [created] = lastToolResults(requests[2].body!);
    expect(created).toEqual({ type: 'tool_result', tool_use_id: expect.stringMatching(ID), content: 'File created successfully at: /memories/notes.md' });

    const unthreaded = await client.beta.messages.toolRunner({
      model: 'claude-test',
      max_tokens: 512,
      messages: [{ role: 'user', content: 'Tabs in Makefiles.' }],
      tools: [store.memoryTool({ session })],
      thread: false,
    });
    expect(unthreaded.content).toEqual([{ type: 'text', text: `Noted in /memories/notes.md: “Tabs in Makefiles.” ${SIGNED}` }]);
    const again = server.messageRequests.slice(3);
    expect(again.map((r) => r.body!.thread)).toEqual([undefined, undefined, undefined]);
    const [inserted] = lastToolResults(again[2].body!);
    expect(inserted).toEqual({ type: 'tool_result', tool_use_id: expect.stringMatching(ID), content: 'The file /memories/notes.md has been edited.' });

    await store.settled(); // the working tree follows the commits asynchronously
    expectRepository(gitReport(store.dir), [
      { id: String(created.tool_use_id), command: 'create', path: SANDBOX_NOTES, session },
      { id: String(inserted.tool_use_id), command: 'insert', path: SANDBOX_NOTES, session },
    ]);
    expect(fs.readFileSync(path.join(store.dir, 'memories', 'notes.md'), 'utf8')).toBe('# Notes\n- Tabs in Makefiles.\n- I prefer spaces.\n');
  }, 60_000);

  test('a thread the sandbox does not hold is a 404 naming it', async () => {
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 10, thread: { type: 'continue', previous_message_id: 'msg_gone' }, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'the sandbox holds no thread with message "msg_gone" (it keeps the latest 256 replies, none across restarts)' },
    });
  });

  test('a failed memory call is answered in text with its error; a request without the memory tool gets text', () => {
    const failed = sandboxReply({
      tools: [{ type: 'memory_20250818', name: 'memory' }],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_x', name: 'memory', input: { command: 'view', path: '/memories' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'The memory store is busy.', is_error: true }] },
      ],
    });
    expect(failed).toEqual({ content: [{ type: 'text', text: `The memory call failed: The memory store is busy. ${SIGNED}` }] });
    const noTool = sandboxReply({ messages: [{ role: 'user', content: 'hi' }] });
    expect(noTool).toEqual({ content: [{ type: 'text', text: `This is memgit's sandbox: it only plays conversations that use the memory tool, and this request offers none. ${SIGNED}` }] });
  });
});
