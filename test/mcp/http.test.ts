/**
 * The MCP handler over real HTTP on 127.0.0.1, mounted in a small express app with a Bearer check as a
 * server would mount it, and spoken to by the MCP SDK's own Streamable HTTP client.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from '../../src/mcp/http';
import { MemoryStore } from '../../src/store/memory-store';
import { loadVectors, makeTempDir, removeDir } from '../store/git-helpers';
import { EmptyStores } from '../support/empty-store';
import { PROTOCOL_VERSION, rawInitialize, rawPost, settlesWithin, toolCallMessage, unfinishedPost } from '../server/mcp-raw';
import { callSequence, expectSameAsReference, gitHistory, MUTATING, runThroughClient, trailerValues, unpack } from './helpers';

const KEYS: Record<string, (store: string) => boolean> = {
  'key-alpha-4f9c2e7a1b': (store) => store === 'alpha',
  'key-beta-8d3e6a0c5f': (store) => store === 'beta',
  'key-vectors-2b7d9e1c': (store) => /^v\d+$/.test(store),
};
const ALPHA = 'key-alpha-4f9c2e7a1b';
const BETA = 'key-beta-8d3e6a0c5f';
const VECTORS = 'key-vectors-2b7d9e1c';
const CLIENT = { name: 'http-test-client', version: '3.1.4' };
const quiet = { fsync: false, log: () => undefined };

interface TestServer {
  url: string;
  handler: McpHttpHandler<express.Request>;
  close(): Promise<void>;
}

/** The store a request names: `/stores/:store/mcp`, or alpha for `/mcp`. */
function storeOf(req: express.Request): string {
  const name = req.params.store;
  return typeof name === 'string' ? name : 'alpha';
}

/** An express app with `/mcp` (store alpha) and `/stores/:store/mcp`, each behind a Bearer key. */
async function startTestServer(stores: Map<string, MemoryStore>, handlerOptions: { maxSessions?: number; idleTimeoutMs?: number } = {}): Promise<TestServer> {
  const handler = createMcpHttpHandler<express.Request>({
    resolveStore: async (req) => stores.get(storeOf(req)) ?? null,
    log: () => undefined,
    ...handlerOptions,
  });
  const app = express();
  const requireKey: express.RequestHandler = (req, res, next) => {
    const match = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '');
    const allows = match ? KEYS[match[1]] : undefined;
    if (!allows || !allows(storeOf(req))) {
      res.status(401).set('WWW-Authenticate', 'Bearer').json({ error: 'unauthorized' });
      return;
    }
    next();
  };
  app.all('/mcp', requireKey, handler);
  app.all('/stores/:store/mcp', requireKey, handler);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    handler,
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function connect(url: string, key: string | null): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : undefined,
  });
  const client = new Client(CLIENT);
  await client.connect(transport);
  return { client, transport };
}

const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

describe('the MCP handler over Streamable HTTP', () => {
  const dirs: string[] = [];
  const stores = new Map<string, MemoryStore>();
  let server: TestServer;

  // A store per vector: each a copy of one fresh store (test/support/empty-store.ts).
  const emptyStores = new EmptyStores();
  const openStore = async (name: string, options = {}): Promise<string> => {
    const dir = await emptyStores.make();
    stores.set(name, await MemoryStore.open(dir, { ...quiet, ...options }));
    return dir;
  };

  beforeAll(async () => {
    await openStore('alpha');
    await openStore('beta');
    server = await startTestServer(stores);
  });

  afterAll(async () => {
    await server.close();
    for (const store of stores.values()) await store.close();
    for (const dir of dirs) removeDir(dir);
    emptyStores.removeAll();
  });

  it('answers every conformance vector with its exact text, each in a fresh store and session', async () => {
    const vectors = loadVectors();
    expect(vectors).toHaveLength(104);
    const mismatches: unknown[] = [];
    for (const [index, vector] of vectors.entries()) {
      const name = `v${index}`;
      await openStore(name, vector.options ?? {});
      const { client, transport } = await connect(`${server.url}/stores/${name}/mcp`, VECTORS);
      try {
        for (const setup of vector.setup) {
          const result = unpack((await client.callTool({ name: 'memory', arguments: setup })) as CallToolResult);
          if (result.isError) mismatches.push({ vector: vector.name, setup, text: result.text });
        }
        const result = unpack((await client.callTool({ name: 'memory', arguments: vector.input })) as CallToolResult);
        if (result.text !== vector.expect.text || result.isError !== vector.expect.is_error) {
          mismatches.push({ vector: vector.name, expected: vector.expect, got: result });
        }
        await transport.terminateSession(); // DELETE: the session ends at once
      } finally {
        await client.close();
      }
      await stores.get(name)!.close();
      stores.delete(name);
    }
    expect(mismatches).toEqual([]);
    expect(server.handler.sessionCount).toBe(0);
  }, 180_000);

  it('answers the whole call sequence exactly as store.execute, and records the session and client on every commit', async () => {
    const dir = await openStore('seq');
    const reference = makeTempDir('memgit-mcp-http-ref-');
    dirs.push(reference);
    KEYS['key-seq-7e2a9c4d1f'] = (store) => store === 'seq';
    const { client, transport } = await connect(`${server.url}/stores/seq/mcp`, 'key-seq-7e2a9c4d1f');
    const session = transport.sessionId!;
    expect(session).toMatch(/^sess_\d{8}T\d{6}_[a-z2-7]{20}$/);
    let records;
    try {
      records = await runThroughClient(client, callSequence());
      const { resources } = await client.listResources();
      expect(resources.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    await expectSameAsReference(reference, records, { session, clientName: CLIENT.name, clientVersion: CLIENT.version });
    const writes = records.filter((r) => !r.isError && MUTATING.has(String((r.input as { command?: unknown }).command)));
    const mcpGit = gitHistory(dir);
    const refGit = gitHistory(reference);
    expect(mcpGit.fsckCode).toBe(0);
    expect(mcpGit.fsck).toBe('');
    expect(mcpGit.status).toBe('');
    expect(mcpGit.messages).toHaveLength(1 + writes.length);
    expect(mcpGit.messages).toEqual(refGit.messages);
    expect(mcpGit.tree).toBe(refGit.tree);
    expect(trailerValues(dir, 'Memory-Session').slice(1)).toEqual(writes.map(() => session));
    expect(trailerValues(dir, 'Memory-Client').slice(1)).toEqual(writes.map(() => 'mcp'));
    expect(trailerValues(dir, 'Memory-Client-Name').slice(1)).toEqual(writes.map(() => CLIENT.name));
    expect(trailerValues(dir, 'Memory-Client-Version').slice(1)).toEqual(writes.map(() => CLIENT.version));
  }, 180_000);

  it('serves /mcp for its store too', async () => {
    const { client } = await connect(`${server.url}/mcp`, ALPHA);
    try {
      const result = unpack((await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/alpha.md', file_text: 'a' } })) as CallToolResult);
      expect(result).toMatchObject({ text: 'File created successfully at: /memories/alpha.md', isError: false });
    } finally {
      await client.close();
    }
    const log = trailerValues(stores.get('alpha')!.dir, 'Memory-Path');
    expect(log[log.length - 1]).toBe('/memories/alpha.md');
  });

  it('gives a client without a key, or with a key for another store, nothing', async () => {
    const alphaDir = stores.get('alpha')!.dir;
    const before = gitHistory(alphaDir).messages.length;
    const attempts: Array<Record<string, string>> = [{}, { Authorization: `Bearer ${BETA}` }, { Authorization: 'Bearer nonsense' }, { Authorization: ALPHA }];
    for (const headers of attempts) {
      for (const url of [`${server.url}/mcp`, `${server.url}/stores/alpha/mcp`]) {
        const response = await post(url, initializeBody, headers);
        expect(response.status).toBe(401);
        expect(response.headers.get('mcp-session-id')).toBeNull();
        expect(await response.text()).toBe('{"error":"unauthorized"}');
      }
    }
    await expect(connect(`${server.url}/stores/alpha/mcp`, null)).rejects.toThrow();
    await expect(connect(`${server.url}/stores/alpha/mcp`, BETA)).rejects.toThrow();

    // A session opened on alpha is not reachable through beta's endpoint, even with beta's key.
    const { client, transport } = await connect(`${server.url}/stores/alpha/mcp`, ALPHA);
    try {
      const call = JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'memory', arguments: { command: 'create', path: '/memories/stolen.md', file_text: 'x' } },
      });
      const sessionHeaders = { 'Mcp-Session-Id': transport.sessionId!, 'Mcp-Protocol-Version': transport.protocolVersion ?? '2025-06-18' };
      const hijack = await post(`${server.url}/stores/beta/mcp`, call, { ...sessionHeaders, Authorization: `Bearer ${BETA}` });
      expect(hijack.status).toBe(404);
      expect(await hijack.json()).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found', data: { code: 'session_not_found' } }, id: null });
      const noKey = await post(`${server.url}/stores/alpha/mcp`, call, sessionHeaders);
      expect(noKey.status).toBe(401);
      // An unknown store behind a valid key is simply not found.
      const unknown = await post(`${server.url}/stores/v999/mcp`, initializeBody, { Authorization: `Bearer ${VECTORS}` });
      expect(unknown.status).toBe(404);
      // No session id: only an initialize may open one.
      const stray = await post(`${server.url}/stores/alpha/mcp`, call, { Authorization: `Bearer ${ALPHA}` });
      expect(stray.status).toBe(400);
    } finally {
      await client.close();
    }
    expect(gitHistory(alphaDir).messages.length).toBe(before);
    expect(gitHistory(stores.get('beta')!.dir).messages.length).toBe(1);
  });

  it("carries a stable code in every JSON-RPC error's data, the SDK transport's own refusals included", async () => {
    const url = `${server.url}/stores/alpha/mcp`;
    const auth = { Authorization: `Bearer ${ALPHA}` };
    const answer = async (response: Response) => [response.status, ((await response.json()) as { error: { code: number; data?: { code?: string } } }).error];
    // memgit's own: a request that names no session and is not an initialize.
    expect(await answer(await fetch(url, { method: 'GET', headers: { ...auth, Accept: 'text/event-stream' } }))).toEqual([
      400,
      { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required', data: { code: 'session_required' } },
    ]);
    // The transport's: an Accept header without event streams (406), a body that is not JSON-RPC (400).
    expect(await answer(await post(url, initializeBody, { ...auth, Accept: 'application/json' }))).toEqual([
      406,
      { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream', data: { code: 'not_acceptable' } },
    ]);
    expect(await answer(await post(url, JSON.stringify({ hello: 'world' }), auth))).toEqual([400, { code: -32700, message: 'Parse error: Invalid JSON-RPC message', data: { code: 'invalid_json' } }]);
  });

  it('says truthfully that nothing was written when the store itself refuses, without host paths', async () => {
    const dir = await openStore('gamma');
    KEYS['key-gamma-5c1e8b3a9d'] = (store) => store === 'gamma';
    const { client } = await connect(`${server.url}/stores/gamma/mcp`, 'key-gamma-5c1e8b3a9d');
    try {
      await stores.get('gamma')!.close(); // e.g. the server shutting down under a running session
      const result = unpack((await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/late.md', file_text: 'x' } })) as CallToolResult);
      expect(result).toMatchObject({ text: 'Error: the memory store is shutting down. Nothing was written.', isError: true });
      expect(result.text).not.toContain(dir);
    } finally {
      await client.close();
    }
    expect(gitHistory(dir).messages).toHaveLength(1);
  });

  it('keeps at most maxSessions sessions, closing the longest idle one to make room', async () => {
    const limited = await startTestServer(stores, { maxSessions: 2 });
    const url = `${limited.url}/stores/beta/mcp`;
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 3; i++) clients.push((await connect(url, BETA)).client);
      expect(limited.handler.sessionCount).toBe(2);
      // The first session was the longest idle: it is gone, and its client is told so.
      await expect(clients[0].callTool({ name: 'memory', arguments: { command: 'view', path: '/memories' } })).rejects.toThrow(/404|Session not found/);
      for (const client of clients.slice(1)) {
        const ok = unpack((await client.callTool({ name: 'memory', arguments: { command: 'view', path: '/memories' } })) as CallToolResult);
        expect(ok.isError).toBe(false);
      }
    } finally {
      for (const client of clients) await client.close();
      await limited.close();
    }
  }, 60_000);

  it('closes a session left idle', async () => {
    const idle = await startTestServer(stores, { idleTimeoutMs: 200 });
    const { client } = await connect(`${idle.url}/stores/beta/mcp`, BETA);
    try {
      // The session exists until it has been idle for idleTimeoutMs (polled, not timed: no threshold here).
      for (let waited = 0; idle.handler.sessionCount > 0 && waited < 30_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(idle.handler.sessionCount).toBe(0);
      await expect(client.callTool({ name: 'memory', arguments: { command: 'view', path: '/memories' } })).rejects.toThrow(/404|Session not found/);
    } finally {
      await client.close();
      await idle.close();
    }
  }, 60_000);
});

/**
 * Owners (issue 25, item 4 and 12): with resolveTarget, every session belongs to the owner that opened it
 * (here the Bearer key itself), quotas are per owner, and an owner no longer valid loses its sessions.
 */
describe('the MCP handler between owners', () => {
  const dirs: string[] = [];
  let store: MemoryStore;
  const revoked = new Set<string>();

  beforeAll(async () => {
    const dir = makeTempDir('memgit-mcp-owners-');
    dirs.push(dir);
    store = await MemoryStore.open(dir, quiet);
  });

  afterAll(async () => {
    await store.close();
    for (const dir of dirs) removeDir(dir);
  });

  /** Any `Bearer owner-*` key is its own owner, on one store. */
  async function ownersServer(handlerOptions: Partial<McpHttpHandlerOptions<express.Request>>) {
    const handler = createMcpHttpHandler<express.Request>({
      resolveTarget: async (req) => {
        const owner = /^Bearer (owner-\w+)$/.exec(req.get('authorization') ?? '')?.[1];
        return owner && !revoked.has(owner) ? { storeId: 'one', owner, use: (task) => task(store) } : null;
      },
      log: () => undefined,
      ...handlerOptions,
    });
    const app = express();
    app.all('/mcp', handler);
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    return {
      url,
      handler,
      close: async () => {
        await handler.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('binds a session to its owner, and makes room only among the requester\'s own sessions', async () => {
    const s = await ownersServer({ maxSessions: 4, maxSessionsPerOwner: 2 });
    try {
      const x1 = (await rawInitialize(s.url, 'owner-x')).session!;
      const x2 = (await rawInitialize(s.url, 'owner-x')).session!;
      const y1 = (await rawInitialize(s.url, 'owner-y')).session!;
      const y2 = (await rawInitialize(s.url, 'owner-y')).session!;
      // Another owner cannot use x's session, on the same store.
      const borrowed = await rawPost(s.url, 'owner-y', toolCallMessage(1, { command: 'view', path: '/memories' }), x1);
      expect([borrowed.status, borrowed.messages[0]]).toEqual([404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found', data: { code: 'session_not_found' } }, id: null }]);
      // x at its quota: its own longest-idle session makes room; y's are untouched.
      const x3 = (await rawInitialize(s.url, 'owner-x')).session!;
      expect(x3).not.toBeNull();
      const status = async (owner: string, session: string) => (await rawPost(s.url, owner, toolCallMessage(2, { command: 'view', path: '/memories' }), session)).status;
      expect([await status('owner-x', x1), await status('owner-x', x2), await status('owner-x', x3)]).toEqual([404, 200, 200]);
      expect([await status('owner-y', y1), await status('owner-y', y2)]).toEqual([200, 200]);
      // The pool is full: an owner with no session of its own to close waits; nobody else's goes.
      const z = await rawInitialize(s.url, 'owner-z');
      expect(z.session).toBeNull();
      expect([z.answer.status, z.answer.headers.get('retry-after')]).toEqual([503, '30']);
      expect(s.handler.sessionCount).toBe(4);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('counts a request as running only once its body is in, and answers 408 to a body that does not come', async () => {
    const s = await ownersServer({ maxSessionsPerOwner: 1, bodyTimeoutMs: 500 });
    try {
      const first = (await rawInitialize(s.url, 'owner-w')).session!;
      const headers = { Authorization: 'Bearer owner-w', 'Mcp-Session-Id': first, 'Mcp-Protocol-Version': PROTOCOL_VERSION };
      const slow = unfinishedPost(s.url, headers, 4096, '{"jsonrpc":"2.0",');
      // The first session has a request arriving, not running: it makes room for the owner's next one.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = await rawInitialize(s.url, 'owner-w');
      expect(second.answer.status).toBe(200);
      const answer = await slow.answer;
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { message: expect.stringMatching(/did not arrive/) } });
      expect(await settlesWithin(slow.closed, 10_000)).toBe(true);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('closes the sessions and event streams of an owner that is no longer valid', async () => {
    const s = await ownersServer({ ownerValid: async (owner) => !revoked.has(owner), ownerCheckMs: 100 });
    try {
      const session = (await rawInitialize(s.url, 'owner-r')).session!;
      const other = (await rawInitialize(s.url, 'owner-q')).session!;
      const stream = await fetch(s.url, { headers: { Authorization: 'Bearer owner-r', 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': PROTOCOL_VERSION, Accept: 'text/event-stream' } });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      const ended = (async () => {
        for (;;) if ((await reader.read()).done) return;
      })().catch(() => undefined);
      expect(await settlesWithin(ended, 300)).toBe(false);
      revoked.add('owner-r');
      expect(await settlesWithin(ended, 10_000)).toBe(true);
      expect(s.handler.sessionCount).toBe(1);
      expect((await rawPost(s.url, 'owner-q', toolCallMessage(3, { command: 'view', path: '/memories' }), other)).status).toBe(200);
    } finally {
      await s.close();
    }
  }, 60_000);
});
