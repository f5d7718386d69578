/**
 * The official SDK's tool runner with `createHttpMemoryTool` against a spawned `memgit server`, the model
 * played by the scripted Messages API server: every tool_result the SDK sends back is byte for byte what
 * `store.execute` answers on a local store given the same calls, and the remote store's commits are
 * checked with the git CLI.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { lastToolResults, ScriptedServer, ScriptStep } from '../../src/agent/scripted-server';
import { createHttpMemoryTool, HttpMemoryToolError } from '../../src/client';
import { MemoryStore } from '../../src/store/memory-store';
import { expectRepository, gitReport, makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeKey, spawnServer, SpawnedServer } from '../server/spawn-server';

const base = makeTempDir('memgit-client-');
const root = path.join(base, 'root');
let server: SpawnedServer;
let scripted: ScriptedServer;
let writer: { key: string; id: string };

beforeAll(async () => {
  await ensureBuilt();
  fs.mkdirSync(root, { mode: 0o700 }); // a server root must be its user's alone (whatever the umask)
  writer = await makeKey(root, 'tenant-*', 'write');
  server = await spawnServer(root);
}, 240_000);

afterAll(async () => {
  await scripted?.close();
  await server?.stop();
  removeDir(base);
});

const TURNS: Array<Array<[string, Record<string, unknown>]>> = [
  [['toolu_01View', { command: 'view', path: '/memories' }]],
  [
    ['toolu_02Create', { command: 'create', path: '/memories/customer/profile.md', file_text: '# Acme\nDeploys on Fridays.\n' }],
    ['toolu_03Missing', { command: 'str_replace', path: '/memories/customer/nope.md', old_str: 'a', new_str: 'b' }],
  ],
  [
    ['toolu_04Replace', { command: 'str_replace', path: '/memories/customer/profile.md', old_str: 'Fridays', new_str: 'Fridays only' }],
    ['toolu_05Insert', { command: 'insert', path: '/memories/customer/profile.md', insert_line: 1, insert_text: 'Contact: Dana\n' }],
    ['toolu_06Escape', { command: 'view', path: '/memories/../../etc/passwd' }],
  ],
  [
    ['toolu_07Rename', { command: 'rename', old_path: '/memories/customer', new_path: '/memories/acme' }],
    ['toolu_08View', { command: 'view', path: '/memories/acme/profile.md', view_range: [1, 2] }],
  ],
  [
    ['toolu_09Delete', { command: 'delete', path: '/memories/acme/profile.md' }],
    ['toolu_10Bad', { command: 'create', path: '/memories/x.md' }],
    ['toolu_11View', { command: 'view', path: '/memories' }],
  ],
];

it('runs a conversation through the SDK tool runner: every tool_result byte-exact, commits in git', async () => {
  const steps: ScriptStep[] = TURNS.map((turn) => ({ content: turn.map(([id, input]) => ({ type: 'tool_use' as const, id, name: 'memory', input })) }));
  steps.push({ content: [{ type: 'text', text: 'Done.' }] });
  scripted = await ScriptedServer.start(steps);
  const client = new Anthropic({ apiKey: 'sk-ant-test-not-a-real-key', baseURL: scripted.url, maxRetries: 0 });
  const session = 'sess_20261203T080000_http';
  const tool = createHttpMemoryTool({ url: server.url, key: writer.key, store: 'tenant-acme', session });
  expect({ type: tool.type, name: tool.name }).toEqual({ type: 'memory_20250818', name: 'memory' });

  const final = await client.beta.messages.toolRunner({
    model: 'claude-test',
    max_tokens: 256,
    messages: [{ role: 'user', content: 'Remember Acme.' }],
    tools: [tool],
  });
  expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Done.' })]);

  const reference = await MemoryStore.open(path.join(base, 'reference'), QUIET);
  try {
    const requests = scripted.messageRequests;
    expect(requests).toHaveLength(TURNS.length + 1);
    for (const [i, turn] of TURNS.entries()) {
      const expected = [];
      for (const [id, input] of turn) expected.push(await reference.execute(toolUse(id, input), { session }));
      // Byte for byte: the raw request text holds exactly the JSON of the reference's results.
      const sent = lastToolResults(requests[i + 1].body!);
      expect(sent).toEqual(expected);
      for (const result of expected) expect(requests[i + 1].raw).toContain(JSON.stringify(result.content));
    }
    expect(requests[0].raw).toContain('"tools":[{"type":"memory_20250818","name":"memory"}]');
  } finally {
    await reference.close();
  }
  // Every commit names the server key the calls came with (Memory-Key).
  const key = writer.id;
  expectRepository(gitReport(path.join(root, 'tenant-acme')), [
    { id: 'toolu_02Create', command: 'create', path: '/memories/customer/profile.md', session, key },
    { id: 'toolu_04Replace', command: 'str_replace', path: '/memories/customer/profile.md', session, key },
    { id: 'toolu_05Insert', command: 'insert', path: '/memories/customer/profile.md', session, key },
    { id: 'toolu_07Rename', command: 'rename', path: '/memories/customer', newPath: '/memories/acme', session, key },
    { id: 'toolu_09Delete', command: 'delete', path: '/memories/acme/profile.md', session, key },
  ]);
}, 60_000);

it('an error result throws the SDK ToolError with the exact text; a refused request is not a tool result', async () => {
  const tool = createHttpMemoryTool({ url: server.url, key: writer.key, store: 'tenant-err', session: 'sess_e' });
  const thrown = await tool.run({ command: 'view', path: '/memories/none.md' }, { toolUse: { id: 'toolu_e1' } }).catch((e: Error) => e);
  expect(thrown.constructor.name).toBe('ToolError');
  expect((thrown as Error & { content: unknown }).content).toBe('The path /memories/none.md does not exist. Please provide a valid path.');
  const foreign = createHttpMemoryTool({ url: server.url, key: writer.key, store: 'other-1', session: 'sess_e' });
  const refused = await foreign.run({ command: 'view', path: '/memories' }, { toolUse: { id: 'toolu_e2' } }).catch((e: Error) => e);
  expect(refused).toBeInstanceOf(HttpMemoryToolError);
  expect((refused as HttpMemoryToolError).status).toBe(404);
  expect((refused as Error).message).toBe('memgit server answered 404: no store "other-1" (nothing was applied)');
  const down = createHttpMemoryTool({ url: 'http://127.0.0.1:9', key: writer.key, store: 'tenant-err', session: 's', retries: 1, maxRetryDelayMs: 10 });
  const unreachable = await down.run({ command: 'view', path: '/memories' }, { toolUse: { id: 'toolu_e3' } }).catch((e: Error) => e);
  expect((unreachable as Error).message).toMatch(/could not be reached .* may or may not have been applied/);
});

it('the package exports startMemgitServer, createKey and createHttpMemoryTool (ESM import of "memgit")', async () => {
  const dir = path.join(base, 'library-root');
  const source = `
    import { startMemgitServer, createKey, createHttpMemoryTool } from 'memgit';
    import pino from 'pino';
    const server = await startMemgitServer({ root: ${JSON.stringify(dir)}, port: 0, logger: pino({ level: 'silent' }) });
    const { key, info } = await createKey(${JSON.stringify(dir)}, { stores: ['lib-*'], scope: 'write' });
    const tool = createHttpMemoryTool({ url: server.url, key, store: 'lib-1', session: 'sess_lib' });
    const content = await tool.run({ command: 'create', path: '/memories/lib.md', file_text: 'x' }, { toolUse: { id: 'toolu_lib' } });
    await server.close();
    console.log(JSON.stringify({ content, keyId: info.id }));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: REPO_ROOT, encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const { content, keyId } = JSON.parse(run.stdout) as { content: string; keyId: string };
  expect(content).toBe('File created successfully at: /memories/lib.md');
  expect(gitReport(path.join(dir, 'lib-1')).commits.map((c) => c.message)).toEqual([
    'memgit: initialise store\n',
    `toolu_lib\n\nMemory-Command: create\nMemory-Path: /memories/lib.md\nMemory-Session: sess_lib\nMemory-Key: ${keyId}\n`,
  ]);
}, 60_000);
