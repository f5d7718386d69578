/**
 * `memgit chat` as a user runs it: the built CLI spawned as a process, the official SDK inside it talking
 * HTTP to a scripted Messages API server on 127.0.0.1 (no key, no network). The assertions are on what
 * the server received and on the commits, checked with the real git CLI.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { CONTEXT_EDITING, DEFAULT_MODEL } from '../../src/agent/chat-session';
import { lastToolResults, RecordedRequest, ScriptedServer, ScriptStep } from '../../src/agent/scripted-server';
import { MISSING_KEY_MESSAGE } from '../../src/cli/commands/chat';
import { expectRepository, gitReport, makeTempDir, removeDir } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { cliEnv, runCli } from './run-cli';

const TOOL_DEFINITION = '"tools":[{"type":"memory_20250818","name":"memory"}]';
const EMPTY_LISTING =
  "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories";

const dirs: string[] = [];
const servers: ScriptedServer[] = [];

function tempRepo(): string {
  const dir = makeTempDir('memgit-chat-');
  dirs.push(dir);
  return path.join(dir, 'store');
}

async function scripted(steps: ScriptStep[]): Promise<ScriptedServer> {
  const server = await ScriptedServer.start(steps);
  servers.push(server);
  return server;
}

function toolUse(id: string, input: Record<string, unknown>) {
  return { type: 'tool_use' as const, id, name: 'memory', input };
}

function apiEnv(server: { url: string }, extra: Record<string, string> = {}) {
  return cliEnv({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key', ...extra });
}

const resultsOf = (request: RecordedRequest) => lastToolResults(request.body!);

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  dirs.forEach(removeDir);
});

describe('a conversation, streamed and then continued without streaming', () => {
  const repo = tempRepo();
  const session = 'sess_20261202T150000_test';

  test('streaming, one prompt, context editing: requests, tool_results and commits', async () => {
    const server = await scripted([
      { content: [{ type: 'text', text: 'Let me look at my memory first.' }, toolUse('toolu_01TestView', { command: 'view', path: '/memories' })] },
      {
        content: [
          toolUse('toolu_01TestCreate', { command: 'create', path: '/memories/notes/prefs.md', file_text: 'Prefers TypeScript.\n' }),
          toolUse('toolu_01TestMissing', { command: 'str_replace', path: '/memories/notes/missing.md', old_str: 'a', new_str: 'b' }),
        ],
      },
      {
        content: [
          { type: 'text', text: 'Filing it under customer.' },
          toolUse('toolu_01TestRename', { command: 'rename', old_path: '/memories/notes/prefs.md', new_path: '/memories/customer/prefs.md' }),
        ],
      },
      { content: [{ type: 'text', text: 'Noted — you prefer TypeScript. ✓' }] },
    ]);
    const run = await runCli(
      ['chat', '--repo', repo, '--session', session, '--context-editing', '--max-tokens', '512', '--system', 'Be brief.', 'I', 'prefer', 'TypeScript'],
      { env: apiEnv(server, { MEMGIT_MODEL: 'claude-from-env' }) },
    );
    expect(run.stderr.split('\n')).toEqual([
      `memgit: session ${session} (continue it with --session ${session}), model claude-from-env, store ${repo}`,
      'memory view /memories: ok (toolu_01TestView)',
      expect.stringMatching(/^memory create \/memories\/notes\/prefs\.md: ok, commit [0-9a-f]{12} \(toolu_01TestCreate\)$/),
      'memory str_replace /memories/notes/missing.md: error: The path /memories/notes/missing.md does not exist. Please provide a valid path. (toolu_01TestMissing)',
      expect.stringMatching(/^memory rename \/memories\/notes\/prefs\.md to \/memories\/customer\/prefs\.md: ok, commit [0-9a-f]{12} \(toolu_01TestRename\)$/),
      '',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Let me look at my memory first.\nFiling it under customer.\nNoted — you prefer TypeScript. ✓\n');

    const requests = server.messageRequests;
    expect(requests).toHaveLength(4);
    for (const request of requests) {
      expect(request.raw).toContain(TOOL_DEFINITION);
      expect(request.body).toMatchObject({ model: 'claude-from-env', max_tokens: 512, system: 'Be brief.', stream: true });
      expect(request.body!.context_management).toEqual(CONTEXT_EDITING);
      expect(request.headers['anthropic-beta']).toBe('context-management-2025-06-27');
    }
    expect(CONTEXT_EDITING.edits).toEqual([
      expect.objectContaining({ type: 'clear_tool_uses_20250919', exclude_tools: ['memory'], trigger: expect.any(Object), keep: expect.any(Object) }),
    ]);
    expect(requests[0].body!.messages).toEqual([{ role: 'user', content: 'I prefer TypeScript' }]);
    expect(resultsOf(requests[1])).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_01TestView', content: EMPTY_LISTING }]);
    expect(resultsOf(requests[2])).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01TestCreate', content: 'File created successfully at: /memories/notes/prefs.md' },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01TestMissing',
        content: 'Error: The path /memories/notes/missing.md does not exist. Please provide a valid path.',
        is_error: true,
      },
    ]);
    expect(resultsOf(requests[3])).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01TestRename', content: 'Successfully renamed /memories/notes/prefs.md to /memories/customer/prefs.md' },
    ]);

    expectRepository(gitReport(repo), [
      { id: 'toolu_01TestCreate', command: 'create', path: '/memories/notes/prefs.md', session },
      { id: 'toolu_01TestRename', command: 'rename', path: '/memories/notes/prefs.md', newPath: '/memories/customer/prefs.md', session },
    ]);
  });

  test('without streaming, interactive from stdin, continuing the session: no beta, history carried over', async () => {
    const server = await scripted([
      {
        content: [
          toolUse('toolu_01TestEdit', {
            command: 'str_replace',
            path: '/memories/customer/prefs.md',
            old_str: 'TypeScript',
            new_str: 'TypeScript and short answers',
          }),
        ],
      },
      { content: [{ type: 'text', text: 'Updated your preferences.' }] },
      { content: [{ type: 'text', text: 'You prefer TypeScript and short answers.' }] },
    ]);
    const run = await runCli(['chat', '--repo', repo, '--session', session, '--no-stream', '--model', 'claude-from-flag'], {
      env: apiEnv(server, { MEMGIT_MODEL: 'claude-from-env' }),
      input: 'I also like short answers\n\nwhat do you remember?\n/exit\nthis line is never sent\n',
    });
    expect(run.stderr).toMatch(/^memgit: session sess_20261202T150000_test .*\nmemory str_replace \/memories\/customer\/prefs\.md: ok, commit [0-9a-f]{12} \(toolu_01TestEdit\)\n$/);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Updated your preferences.\nYou prefer TypeScript and short answers.\n');

    const requests = server.messageRequests;
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      expect(request.raw).toContain(TOOL_DEFINITION);
      expect(request.body!.model).toBe('claude-from-flag');
      expect(request.body!.stream).not.toBe(true);
      expect(request.body).not.toHaveProperty('context_management');
      expect(request.headers).not.toHaveProperty('anthropic-beta');
    }
    expect(resultsOf(requests[1])).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01TestEdit',
        content:
          'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
          '     1\tPrefers TypeScript and short answers.\n     2\t',
      },
    ]);
    expect(requests[2].body!.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(requests[2].body!.messages!.at(-1)).toEqual({ role: 'user', content: 'what do you remember?' });

    expectRepository(gitReport(repo), [
      { id: 'toolu_01TestCreate', command: 'create', path: '/memories/notes/prefs.md', session },
      { id: 'toolu_01TestRename', command: 'rename', path: '/memories/notes/prefs.md', newPath: '/memories/customer/prefs.md', session },
      { id: 'toolu_01TestEdit', command: 'str_replace', path: '/memories/customer/prefs.md', session },
    ]);
  });
});

describe('failures are reported in one plain line, and what was written stays committed', () => {
  test('529 overloaded after a write (retried by the SDK, then given up)', async () => {
    const repo = tempRepo();
    const server = await scripted([
      { content: [toolUse('toolu_01TestBeforeOutage', { command: 'create', path: '/memories/outage.md', file_text: 'written before the outage\n' })] },
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' }, sticky: true },
    ]);
    const run = await runCli(['chat', '--repo', repo, '--session', 'sess_outage', 'remember this'], { env: apiEnv(server) });
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^memory create \/memories\/outage\.md: ok, commit [0-9a-f]{12} \(toolu_01TestBeforeOutage\)$/),
      'memgit: the Messages API is overloaded (529 overloaded_error: Overloaded); try again in a moment ' +
        '(the 1 memory write made before it is committed)',
      '',
    ]);
    // The first turn, then the overloaded one and the SDK's two retries of it.
    expect(server.messageRequests).toHaveLength(4);
    expectRepository(gitReport(repo), [{ id: 'toolu_01TestBeforeOutage', command: 'create', path: '/memories/outage.md', session: 'sess_outage' }]);
  });

  test('overloaded in the middle of a streamed reply (an error event, not retried)', async () => {
    const repo = tempRepo();
    const server = await scripted([
      { content: [toolUse('toolu_01TestBeforeBreak', { command: 'create', path: '/memories/kept.md', file_text: 'kept\n' })] },
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' }, midStream: true },
    ]);
    const run = await runCli(['chat', '--repo', repo, '--session', 'sess_break', 'remember this'], { env: apiEnv(server) });
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').slice(2)).toEqual([
      'memgit: the Messages API is overloaded (overloaded_error: Overloaded); try again in a moment ' +
        '(the 1 memory write made before it is committed)',
      '',
    ]);
    expect(server.messageRequests).toHaveLength(2);
    expectRepository(gitReport(repo), [{ id: 'toolu_01TestBeforeBreak', command: 'create', path: '/memories/kept.md', session: 'sess_break' }]);
  });

  test('401: the key is refused', async () => {
    const repo = tempRepo();
    const server = await scripted([{ error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' }, sticky: true }]);
    const run = await runCli(['chat', '--repo', repo, 'hello'], { env: apiEnv(server) });
    expect(run.code).toBe(1);
    const lines = run.stderr.split('\n');
    expect(lines[0]).toMatch(/^memgit: session sess_\d{8}T\d{6}_[a-z0-9]{4} \(continue it with --session sess_/);
    expect(lines.slice(1)).toEqual([
      'memgit: the Messages API refused the API key (401 authentication_error: invalid x-api-key); check ANTHROPIC_API_KEY',
      '',
    ]);
    expect(server.messageRequests).toHaveLength(1);
    expect(server.messageRequests[0].body!.model).toBe(DEFAULT_MODEL);
  });

  test('connection refused', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const run = await runCli(['chat', '--repo', tempRepo(), 'hello'], { env: apiEnv({ url: `http://127.0.0.1:${closedPort}` }) });
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').slice(1)).toEqual([
      expect.stringMatching(
        new RegExp(`^memgit: could not reach the Messages API at http://127\\.0\\.0\\.1:${closedPort}: .*ECONNREFUSED.*; check your network`),
      ),
      '',
    ]);
  });

  test('no API key: one clear message that points to the demo, and nothing is created', async () => {
    const repo = tempRepo();
    const run = await runCli(['chat', '--repo', repo, 'hello'], { env: cliEnv() });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`memgit: ${MISSING_KEY_MESSAGE}\n`);
    expect(MISSING_KEY_MESSAGE).toMatch(/ANTHROPIC_API_KEY.*npm start.*memgit demo/);
    expect(run.stdout).toBe('');
    expect(fs.existsSync(repo)).toBe(false);
  });
});
