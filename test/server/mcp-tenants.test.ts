/**
 * MCP on `memgit server` between tenants who do not trust each other (issue 25, items 3, 4, 5, 11 and
 * 12's event streams): every MCP message counts against the key's rate limit and obeys --body-limit; one
 * key's sessions can neither evict nor starve another key's; a session belongs to the key that opened it;
 * a session outlives its store's closing by the registry; a request takes its store only once its body
 * is in; a revoked key's event stream is closed. The built CLI is spawned; raw HTTP over loopback.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { gitHistory, trailerValues } from '../mcp/helpers';
import { ensureBuilt } from '../support/dist';
import { keysCli, makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';
import {
  eventually,
  mcpUrl,
  PROTOCOL_VERSION,
  rawInitialize,
  rawPost,
  settlesWithin,
  toolCallMessage,
  toolText,
  unfinishedPost,
  UnfinishedRequest,
} from './mcp-raw';

const base = makeTempDir('memgit-mcp-tenants-');
const servers: SpawnedServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 240_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  removeDir(base);
});

async function serverWith(name: string, args: string[], keys: Record<string, string>): Promise<{ server: SpawnedServer; root: string; keys: Record<string, { key: string; id: string }> }> {
  const root = path.join(base, name);
  fs.mkdirSync(root);
  const made: Record<string, { key: string; id: string }> = {};
  for (const [label, stores] of Object.entries(keys)) made[label] = await makeKey(root, stores, 'write');
  const server = await spawnServer(root, args);
  servers.push(server);
  return { server, root, keys: made };
}

/** Commits in a store (0 when it does not exist). */
function commits(root: string, store: string): number {
  const dir = path.join(root, store);
  return fs.existsSync(path.join(dir, '.git')) ? gitHistory(dir).messages.length : 0;
}

const create = (id: number, file: string, text = 'x\n') => toolCallMessage(id, { command: 'create', path: `/memories/${file}`, file_text: text });
const view = (id: number) => toolCallMessage(id, { command: 'view', path: '/memories' });

describe('rate limit and body limit (item 3)', () => {
  let ctx: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    ctx = await serverWith('limits', ['--rate-limit', '5', '--body-limit', '64kb'], { a: 'a-*', b: 'b-*', c: 'c-*' });
  }, 60_000);

  it('counts every MCP message against the key\'s requests a minute, as the REST API does', async () => {
    const url = mcpUrl(ctx.server.url, 'a-1');
    const { session } = await rawInitialize(url, ctx.keys.a.key); // initialize + notifications/initialized: 2 of 5
    expect(session).not.toBeNull();
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await rawPost(url, ctx.keys.a.key, create(10 + i, `f${i}.md`), session!)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(12);
    expect(commits(ctx.root, 'a-1')).toBe(1 + 3);
    // Another key's budget is its own.
    expect((await postToolCall(ctx.server.url, 'b-1', ctx.keys.b.key, { tool_use: toolUse('toolu_b1', { command: 'view', path: '/memories' }), session: 'sess_b' })).status).toBe(200);
  });

  it('counts a JSON-RPC batch as its size: a batch beyond what is left is refused whole and writes nothing', async () => {
    const url = mcpUrl(ctx.server.url, 'c-1');
    const { session } = await rawInitialize(url, ctx.keys.c.key); // 2 of 5
    const pair = await rawPost(url, ctx.keys.c.key, [create(1, 'one.md'), create(2, 'two.md')], session!); // 4 of 5
    expect(pair.status).toBe(200);
    expect(pair.messages.map((m) => toolText(m).text)).toEqual(['File created successfully at: /memories/one.md', 'File created successfully at: /memories/two.md']);
    const hundred = Array.from({ length: 100 }, (_, i) => create(100 + i, `batch${i}.md`));
    const refused = await rawPost(url, ctx.keys.c.key, hundred, session!);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(commits(ctx.root, 'c-1')).toBe(1 + 2);
  });

  it('holds MCP bodies to --body-limit: 413, nothing read or written', async () => {
    const url = mcpUrl(ctx.server.url, 'b-2');
    const { session } = await rawInitialize(url, ctx.keys.b.key);
    const big = await rawPost(url, ctx.keys.b.key, create(3, 'big.md', 'y'.repeat(100 * 1024)), session!);
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text)).toEqual({ error: { type: 'request_too_large', message: expect.stringMatching(/too large/), code: 'body_too_large' } });
    expect(commits(ctx.root, 'b-2')).toBe(0);
  });
});

describe('sessions between keys (item 4)', () => {
  let ctx: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    ctx = await serverWith('sessions', [], { a: 'shared-*', a2: 'shared-*', b: 'b-*' });
  }, 60_000);

  it('binds a session to the key that opened it: another key of the same store gets 404 and writes nothing', async () => {
    const url = mcpUrl(ctx.server.url, 'shared-1');
    const { session } = await rawInitialize(url, ctx.keys.a.key);
    expect((await rawPost(url, ctx.keys.a.key, create(1, 'mine.md'), session!)).status).toBe(200);
    const borrowed = await rawPost(url, ctx.keys.a2.key, create(2, 'borrowed.md'), session!);
    expect(borrowed.status).toBe(404);
    expect(borrowed.messages[0]).toMatchObject({ error: { code: -32001, message: 'Session not found', data: { code: 'session_not_found' } } });
    expect(trailerValues(path.join(ctx.root, 'shared-1'), 'Memory-Path').slice(1)).toEqual(['/memories/mine.md']);
  });

  it('lets no key evict or starve another key\'s sessions, with 100 initializes and unfinished bodies in all of them', async () => {
    const bUrl = mcpUrl(ctx.server.url, 'b-1');
    const bSession = (await rawInitialize(bUrl, ctx.keys.b.key)).session!;
    const aUrl = mcpUrl(ctx.server.url, 'shared-2');
    const aSessions: string[] = [];
    for (let i = 0; i < 100; i++) {
      const { session, answer } = await rawInitialize(aUrl, ctx.keys.a.key);
      expect([answer.status, answer.text]).toEqual([200, expect.any(String)]);
      aSessions.push(session!);
    }
    // A's own oldest sessions made room for its newest; B's was not touched.
    expect((await rawPost(aUrl, ctx.keys.a.key, view(5), aSessions[0])).status).toBe(404);
    expect((await rawPost(aUrl, ctx.keys.a.key, view(6), aSessions[99])).status).toBe(200);
    const bCall = await rawPost(bUrl, ctx.keys.b.key, create(7, 'b.md'), bSession);
    expect(bCall.status).toBe(200);
    expect(toolText(bCall.messages[0])).toEqual({ text: 'File created successfully at: /memories/b.md', isError: false });

    // A leaves a body unfinished in every session it was given, and in as many initializes again.
    const hanging: UnfinishedRequest[] = [];
    const headers = { Authorization: `Bearer ${ctx.keys.a.key}`, 'Mcp-Protocol-Version': PROTOCOL_VERSION };
    try {
      for (const session of aSessions) hanging.push(unfinishedPost(aUrl, { ...headers, 'Mcp-Session-Id': session }, 4096, '{"jsonrpc":"2.0",'));
      for (let i = 0; i < 100; i++) hanging.push(unfinishedPost(aUrl, headers, 4096, '{"jsonrpc":"2.0",'));
      // Give them time to arrive (until the first is refused, or 3 s).
      await eventually(async () => (await Promise.all(hanging.map((h) => settlesWithin(h.answer, 1)))).some(Boolean), 3000);
      // B can still open a session and use both of its sessions.
      const fresh = await rawInitialize(bUrl, ctx.keys.b.key);
      expect(fresh.answer.status).toBe(200);
      expect((await rawPost(bUrl, ctx.keys.b.key, view(8), fresh.session!)).status).toBe(200);
      expect((await rawPost(bUrl, ctx.keys.b.key, view(9), bSession)).status).toBe(200);
      // A's requests beyond its own allowance were told so at once (429), not queued.
      const early = await Promise.all(hanging.map((h) => settlesWithin(h.answer, 2000)));
      const refused = await Promise.all(hanging.filter((_, i) => early[i]).map((h) => h.answer));
      expect(refused.length).toBeGreaterThan(0);
      expect(new Set(refused.map((r) => r.status))).toEqual(new Set([429]));
    } finally {
      for (const h of hanging) h.abort();
    }
  }, 120_000);
});

describe('sessions and the store registry (items 5 and 11)', () => {
  let ctx: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    ctx = await serverWith('registry', ['--idle-seconds', '1', '--max-open-stores', '1', '--max-queue', '2'], { a: 'a-*', b: 'b-*' });
  }, 60_000);

  const openStores = async () => ((await (await fetch(`${ctx.server.url}/healthz`)).json()) as { openStores: number }).openStores;

  it('keeps a session when the registry closes its idle store, or pushes it out of the LRU', async () => {
    const url = mcpUrl(ctx.server.url, 'a-1');
    const { session } = await rawInitialize(url, ctx.keys.a.key);
    expect(toolText((await rawPost(url, ctx.keys.a.key, create(1, 'one.md'), session!)).messages[0]).isError).toBe(false);
    expect(await eventually(async () => (await openStores()) === 0)).toBe(true); // closed after 1 s idle
    const afterIdle = await rawPost(url, ctx.keys.a.key, create(2, 'two.md'), session!);
    expect(afterIdle.status).toBe(200);
    expect(toolText(afterIdle.messages[0])).toEqual({ text: 'File created successfully at: /memories/two.md', isError: false });
    // Another tenant's store takes the only open slot: a-1 is closed again.
    expect((await postToolCall(ctx.server.url, 'b-1', ctx.keys.b.key, { tool_use: toolUse('toolu_b1', { command: 'view', path: '/memories' }), session: 'sess_b' })).status).toBe(200);
    const afterLru = await rawPost(url, ctx.keys.a.key, create(3, 'three.md'), session!);
    expect(afterLru.status).toBe(200);
    expect(toolText(afterLru.messages[0]).isError).toBe(false);
    expect(trailerValues(path.join(ctx.root, 'a-1'), 'Memory-Session').slice(1)).toEqual([session, session, session]);
  }, 60_000);

  it('takes a store only once the body is in: unfinished MCP bodies and open event streams hold no queue slot', async () => {
    const url = mcpUrl(ctx.server.url, 'a-2');
    const { session } = await rawInitialize(url, ctx.keys.a.key);
    const headers = { Authorization: `Bearer ${ctx.keys.a.key}`, 'Mcp-Session-Id': session!, 'Mcp-Protocol-Version': PROTOCOL_VERSION };
    const hanging = [0, 1, 2].map(() => unfinishedPost(url, headers, 4096, '{"jsonrpc":"2.0",'));
    const streams: AbortController[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const s = (await rawInitialize(url, ctx.keys.a.key)).session!;
        const abort = new AbortController();
        streams.push(abort);
        const stream = await fetch(url, { headers: { ...headers, 'Mcp-Session-Id': s, Accept: 'text/event-stream' }, signal: abort.signal });
        expect(stream.status).toBe(200);
      }
      // --max-queue 2, yet the store's queue is free for a call whose body is complete.
      const rest = await postToolCall(ctx.server.url, 'a-2', ctx.keys.a.key, { tool_use: toolUse('toolu_a2', { command: 'create', path: '/memories/rest.md', file_text: 'r' }), session: 'sess_rest' });
      expect([rest.status, rest.text]).toEqual([200, expect.stringContaining('File created successfully')]);
      // Nothing pins the store either: it is closed when idle although the streams stay open.
      expect(await eventually(async () => (await openStores()) === 0)).toBe(true);
      hanging[0].finish(JSON.stringify(view(4)).slice('{"jsonrpc":"2.0",'.length).padEnd(4096 - '{"jsonrpc":"2.0",'.length, ' '));
      const finished = await hanging[0].answer;
      expect(finished.status).toBe(200);
    } finally {
      for (const h of hanging) h.abort();
      for (const s of streams) s.abort();
    }
  }, 60_000);
});

describe('revocation (item 12, event streams)', () => {
  it('closes a revoked key\'s open event stream and answers its next request 401', async () => {
    const ctx = await serverWith('revoke', [], { a: 'a-*' });
    const url = mcpUrl(ctx.server.url, 'a-1');
    const { session } = await rawInitialize(url, ctx.keys.a.key);
    const stream = await fetch(url, {
      headers: { Authorization: `Bearer ${ctx.keys.a.key}`, 'Mcp-Session-Id': session!, 'Mcp-Protocol-Version': PROTOCOL_VERSION, Accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return;
    })().catch(() => undefined);
    expect(await settlesWithin(ended, 500)).toBe(false);
    expect(keysCli(['revoke', '--root', ctx.root, ctx.keys.a.id]).status).toBe(0);
    expect(await settlesWithin(ended, 20_000)).toBe(true);
    expect((await rawPost(url, ctx.keys.a.key, view(2), session!)).status).toBe(401);
  }, 60_000);
});
