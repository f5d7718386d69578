/**
 * MCP on `memgit server`: /stores/{store}/mcp behind the server's keys, spoken to by the MCP SDK's own
 * Streamable HTTP client against the spawned server; commits checked with the git CLI.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryStore } from '../../src/store/memory-store';
import { gitReport, makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { expectNoUnexpected, makeKey, spawnServer, SpawnedServer } from './spawn-server';

const base = makeTempDir('memgit-server-mcp-');
const root = path.join(base, 'root');
let server: SpawnedServer;
let acme: { key: string; id: string };
let beta: { key: string; id: string };
let reader: { key: string; id: string };

beforeAll(async () => {
  await ensureBuilt();
  fs.mkdirSync(root, { mode: 0o700 }); // a server root must be its user's alone (whatever the umask)
  acme = await makeKey(root, 'acme-*', 'write');
  beta = await makeKey(root, 'beta-*', 'write');
  reader = await makeKey(root, 'acme-*', 'read');
  server = await spawnServer(root);
}, 240_000);

afterEach(() => expectNoUnexpected(server));

afterAll(async () => {
  await server?.stop();
  removeDir(base);
});

async function connect(store: string, key: string | null): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/stores/${store}/mcp`), {
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : undefined,
  });
  const client = new Client({ name: 'memgit-test', version: '1.2.3' });
  await client.connect(transport);
  return client;
}

const text = (result: CallToolResult) => (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('');

test('a write key reaches its store over MCP; each call is a commit naming the client and the MCP session', async () => {
  const client = await connect('acme-mcp', acme.key);
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name)).toEqual(['memory']);
  const created = (await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/a.md', file_text: 'hello\n' } })) as CallToolResult;
  expect(text(created)).toBe('File created successfully at: /memories/a.md');
  expect(created.isError).toBeFalsy();
  const failed = (await client.callTool({ name: 'memory', arguments: { command: 'view', path: '/memories/missing.md' } })) as CallToolResult;
  expect(failed.isError).toBe(true);
  expect(text(failed)).toMatch(/^The path \/memories\/missing\.md does not exist/);
  await client.close();
  const store = path.join(root, 'acme-mcp');
  const report = gitReport(store);
  expect([report.fsckCode, report.fsckOutput]).toEqual([0, '']);
  expect(report.status).toBe('');
  expect(report.commits).toHaveLength(2); // the store's first commit, then the create
  const log = report.commits[report.commits.length - 1].message; // oldest first
  expect(log).toMatch(/^mcp_\d{8}T\d{6}\.\d{3}_[a-z0-9]+\n\n/);
  expect(log).toContain('Memory-Client: mcp');
  expect(log).toContain('Memory-Client-Name: memgit-test');
  expect(log).toMatch(/Memory-Session: sess_/);
  // The key the session was opened with, from the key the server checked (issue 25, item 10).
  expect(log).toContain(`Memory-Key: ${acme.id}`);
});

test('no key, a wrong key, a read key or another store\'s key gets nothing and writes nothing', async () => {
  await expect(connect('acme-mcp2', null)).rejects.toThrow(/authentication_error/);
  await expect(connect('acme-mcp2', 'mgk_0000000000000000_wrong')).rejects.toThrow(/authentication_error/);
  await expect(connect('acme-mcp2', reader.key)).rejects.toThrow(/permission_error/);
  await expect(connect('acme-mcp2', beta.key)).rejects.toThrow(/not_found_error/);
  expect(fs.existsSync(path.join(root, 'acme-mcp2'))).toBe(false);
});

test('a write to a read-only clone under the root says it was not applied (was "may or may not have been applied"); reads work', async () => {
  const dir = path.join(root, 'acme-mcp-ro');
  const store = await MemoryStore.open(dir, QUIET);
  await store.execute(toolUse('toolu_mro1', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_mro' });
  await store.close();
  // What `memgit clone` sets in the clone's config.
  expect(spawnSync('git', ['-C', dir, 'config', 'memgit.readonly', 'true']).status).toBe(0);
  const client = await connect('acme-mcp-ro', acme.key);
  try {
    const refused = (await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/b.md', file_text: 'b\n' } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe('Error: the memory store is a read-only clone for auditing; it takes no writes. Nothing was written.');
    const read = (await client.callTool({ name: 'memory', arguments: { command: 'view', path: '/memories/a.md' } })) as CallToolResult;
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('     1\ta');
  } finally {
    await client.close();
  }
  expect(gitReport(dir).commits).toHaveLength(2);
  expect(server.stdout() + server.stderr()).not.toMatch(/ReadOnlyStoreError/);
});
