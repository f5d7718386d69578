/**
 * `memgit mcp` as Claude Code runs it: the built CLI spawned as a process, spoken to by the MCP SDK's own
 * client over stdio. Every call of the conformance vectors and hostile paths goes through it and must
 * answer exactly what `store.execute` answers; the repository is then checked with the git CLI.
 */
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeTempDir, removeDir, headFiles } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { callSequence, expectSameAsReference, gitHistory, MUTATING, runThroughClient, trailerValues, unpack } from './helpers';

/** A hostile client: its name and version try to forge trailers and hide text. */
const CLIENT_NAME = 'evil-client\nMemory-Session: sess_forged\r\n';
const CLIENT_VERSION = '1.0\u202e\u0000 (beta)';
const CLEAN_NAME = 'evil-client Memory-Session: sess_forged';
/** Each run of control characters becomes one space; other characters are kept (the UI shows them marked). */
const CLEAN_VERSION = '1.0\u202e  (beta)';

interface Running {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  protocolErrors: Error[];
}

async function startMcp(repo: string, extraArgs: string[] = []): Promise<Running> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_MAIN, 'mcp', '--repo', repo, ...extraArgs],
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: CLIENT_NAME, version: CLIENT_VERSION });
  const protocolErrors: Error[] = [];
  // Anything on stdout that is not a protocol message ends up here.
  client.onerror = (error) => protocolErrors.push(error);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, protocolErrors };
}

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

describe('memgit mcp over stdio', () => {
  let repo: string;
  let reference: string;

  beforeEach(() => {
    repo = makeTempDir('memgit-mcp-');
    reference = makeTempDir('memgit-mcp-ref-');
  });
  afterEach(() => {
    removeDir(repo);
    removeDir(reference);
  });

  it('offers one tool, memory, with the memory tool input schema', async () => {
    const { client } = await startMcp(repo);
    try {
      expect(client.getServerVersion()?.name).toBe('memgit');
      expect(client.getServerCapabilities()?.tools).toBeDefined();
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['memory']);
      const [tool] = tools;
      expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual(
        ['command', 'file_text', 'insert_line', 'insert_text', 'new_path', 'new_str', 'old_path', 'old_str', 'path', 'view_range'],
      );
      expect(tool.inputSchema.required).toEqual(['command']);
      expect((tool.inputSchema.properties as Record<string, { enum?: string[] }>).command.enum).toEqual(
        ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'],
      );
      expect(tool.description).toMatch(/view \/memories/);
      expect(tool.description).toMatch(/organised/);
    } finally {
      await client.close();
    }
  });

  it('answers every vector and hostile-path call exactly as store.execute, one commit per write, trailers sanitised', async () => {
    const running = await startMcp(repo);
    const calls = callSequence();
    let records;
    try {
      records = await runThroughClient(running.client, calls);
      // A tool that does not exist is a protocol error, not a memory call.
      await expect(running.client.callTool({ name: 'bash', arguments: { command: 'ls' } })).rejects.toThrow(/Unknown tool/);
      // No arguments at all reach the contract as such.
      const bare = unpack((await running.client.callTool({ name: 'memory' })) as CallToolResult);
      expect(bare).toMatchObject({ text: 'Error: Invalid input: input must be an object', isError: true });
    } finally {
      await running.client.close();
    }
    expect(running.protocolErrors).toEqual([]);
    const session = /memgit: MCP server on stdio for .*, session (sess_\S+)\n/.exec(running.stderr())?.[1];
    expect(session).toMatch(/^sess_\d{8}T\d{6}_[a-z2-7]{20}$/);

    const writes = records.filter((r) => !r.isError && MUTATING.has(String((r.input as { command?: unknown }).command)));
    expect(writes.length).toBeGreaterThan(100);
    expect(records.filter((r) => r.isError).length).toBeGreaterThan(400);
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);

    await expectSameAsReference(reference, records, { session: session!, clientName: CLIENT_NAME, clientVersion: CLIENT_VERSION });

    const mcpGit = gitHistory(repo);
    const refGit = gitHistory(reference);
    expect(mcpGit.fsck).toBe('');
    expect(mcpGit.fsckCode).toBe(0);
    expect(mcpGit.status).toBe('');
    expect(mcpGit.messages).toHaveLength(1 + writes.length);
    expect(mcpGit.messages).toEqual(refGit.messages);
    expect(mcpGit.tree).toBe(refGit.tree);
    expect(mcpGit.messages.slice(1).map((m) => m.split('\n')[0])).toEqual(writes.map((w) => w.id));
    // Every write names its session once, and the client as sanitised text.
    expect(trailerValues(repo, 'Memory-Session').slice(1)).toEqual(writes.map(() => session));
    expect(new Set(trailerValues(repo, 'Memory-Client').slice(1))).toEqual(new Set(['mcp']));
    expect(new Set(trailerValues(repo, 'Memory-Client-Name').slice(1))).toEqual(new Set([CLEAN_NAME]));
    expect(new Set(trailerValues(repo, 'Memory-Client-Version').slice(1))).toEqual(new Set([CLEAN_VERSION]));
    // The whole message of the first write, byte for byte: the forged line is folded into the name.
    const first = writes[0].input as { command: string; path: string };
    expect(first.command).toBe('create');
    expect(mcpGit.messages[1]).toBe(
      `${writes[0].id}\n\nMemory-Command: create\nMemory-Path: ${first.path}\nMemory-Session: ${session}\n` +
        `Memory-Client: mcp\nMemory-Client-Name: ${CLEAN_NAME}\nMemory-Client-Version: ${CLEAN_VERSION}\n`,
    );
  }, 240_000);

  it('offers the memory files at HEAD as memory:// resources, and nothing outside /memories', async () => {
    const { client } = await startMcp(repo, ['--session', 'sess_resources']);
    try {
      const files: Record<string, string> = {
        '/memories/notes.md': '# Notes\n',
        '/memories/projects/100% done.md': 'done\n',
        '/memories/projects/café.txt': 'crème\n',
      };
      for (const [path, fileText] of Object.entries(files)) {
        const result = unpack((await client.callTool({ name: 'memory', arguments: { command: 'create', path, file_text: fileText } })) as CallToolResult);
        expect(result.isError).toBe(false);
      }
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual([
        'memory:///memories/notes.md',
        'memory:///memories/projects/100%25%20done.md',
        'memory:///memories/projects/caf%C3%A9.txt',
      ]);
      expect(resources.map((r) => r.name)).toEqual(['/memories/notes.md', '/memories/projects/100% done.md', '/memories/projects/café.txt']);
      const head = headFiles(repo);
      for (const resource of resources) {
        const { contents } = await client.readResource({ uri: resource.uri });
        expect(contents).toHaveLength(1);
        expect((contents[0] as { text: string }).text).toBe(head.get(resource.name.slice(1))!.toString('utf8'));
      }
      for (const uri of ['memory:///memories/../.git/config', 'memory:///memories/%2e%2e/x', 'memory:///etc/passwd', 'memory:///memories/nope.md', 'memory:///memories', 'file:///etc/passwd', 'memory:///memories/%E0%A4%A']) {
        await expect(client.readResource({ uri })).rejects.toThrow(/Resource not found/);
      }
    } finally {
      await client.close();
    }
    expect(trailerValues(repo, 'Memory-Session').slice(1)).toEqual(['sess_resources', 'sess_resources', 'sess_resources']);
  }, 60_000);

  it('writes only protocol to stdout, logs to stderr, and exits 0 once stdin ends (the call under way committed)', async () => {
    const child = spawn(process.execPath, [CLI_MAIN, 'mcp', '--repo', repo, '--session', 'sess_raw'], { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-client', version: '9' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory', arguments: { command: 'create', path: '/memories/last.md', file_text: 'bye' } } });
    child.stdin.end(); // the client goes away right after its last call
    expect(await exited).toBe(0);
    const lines = stdout.split('\n').filter((line) => line !== '');
    const messages = lines.map((line) => JSON.parse(line) as { jsonrpc: string; id?: number });
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(messages.map((m) => m.id)).toEqual([1, 2]);
    expect(stderr).toMatch(/^memgit: MCP server on stdio for .*, session sess_raw\n$/);
    const git = gitHistory(repo);
    expect(git.fsckCode).toBe(0);
    expect(git.status).toBe('');
    expect(git.messages).toHaveLength(2);
    expect(trailerValues(repo, 'Memory-Client-Name')).toEqual(['', 'raw-client']);
  }, 60_000);
});
