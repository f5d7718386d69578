/**
 * Dreams on `memgit server` (issue 28): POST/GET /api/v1/stores/{store}/dreams, GET …/{id},
 * POST …/{id}/cancel, with keys (no key 401, a read key 403 to start one, another tenant's store 404), a
 * second dream while one runs 409 naming the first, a cancel taking effect at the next turn, and a dream
 * run to completion whose review then waits. The server is the package's startMemgitServer in this
 * process; the dream's SDK talks HTTP to a Messages API stand-in on 127.0.0.1.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import pino from 'pino';
import { startMemgitServer } from '../../src';
import { DreamJobs } from '../../src/server/dreams';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { makeKey } from './spawn-server';

let root = '';
let api: http.Server;
let apiUrl = '';
/** Replies the Messages API stand-in gives, in order; a reply `null` is held until `release()`. */
const replies: Array<object | null> = [];
const held: Array<() => void> = [];
let server: Awaited<ReturnType<typeof startMemgitServer>>;
let keys: Record<'operator' | 'reader' | 'writer', { key: string; id: string }>;

function message(content: object[]): object {
  return { id: `msg_${Math.random().toString(36).slice(2)}`, type: 'message', role: 'assistant', model: 'claude-test-model', content,
    stop_reason: content.some((b) => (b as { type: string }).type === 'tool_use') ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 7, output_tokens: 3 } };
}

async function call(method: string, p: string, key: string | null, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${p}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function until(p: string, status: string): Promise<Record<string, unknown>> {
  for (let tries = 0; ; tries++) {
    const got = await call('GET', p, keys.reader.key);
    if (tries > 600) throw new Error(`dream still ${JSON.stringify(got.json.status)} after 600 polls`);
    if (got.json.status === status) return got.json;
    if (['completed', 'failed', 'canceled'].includes(String(got.json.status))) throw new Error(`dream ended ${JSON.stringify(got.json)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('memgit-dream-server-');
  for (const id of ['acme-1', 'other-1']) {
    const store = await MemoryStore.open(path.join(root, id), { log: () => undefined });
    await store.execute({ type: 'tool_use', id: 'toolu_seed', name: 'memory', input: { command: 'create', path: '/memories/tea.md', file_text: '- Tea: green\n' } }, { session: 'sess_a' });
    await store.close();
  }
  keys = { operator: await makeKey(root, 'acme-*', 'operator'), reader: await makeKey(root, 'acme-*', 'read'), writer: await makeKey(root, 'acme-*', 'write') };
  api = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const reply = replies.shift();
      const send = (body: object) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (reply === null) held.push(() => send(message([{ type: 'tool_use', id: 'toolu_h1', name: 'memory', input: { command: 'create', path: '/memories/held.md', file_text: 'x\n' } }])));
      else send(reply ?? message([{ type: 'text', text: 'nothing left' }]));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', () => resolve()));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  server = await startMemgitServer({
    root,
    port: 0,
    logger: pino({ level: 'silent' }),
    dreams: new DreamJobs({ client: () => new Anthropic({ apiKey: 'sk-ant-test-not-a-real-key', baseURL: apiUrl, maxRetries: 0 }), maxConcurrent: 2 }),
  });
});

afterAll(async () => {
  for (const release of held) release();
  await server?.close();
  api.closeAllConnections();
  await new Promise<void>((resolve) => api.close(() => resolve()));
  removeDir(root);
});

it('keys: no key 401, a read or write key may not start one (403), another tenant\'s store 404, bad input 400', async () => {
  const body = { inputs: [{ type: 'sessions', session_ids: ['sess_a'] }], model: 'claude-test-model' };
  expect((await call('POST', '/api/v1/stores/acme-1/dreams', null, body)).status).toBe(401);
  expect((await call('POST', '/api/v1/stores/acme-1/dreams', keys.reader.key, body)).status).toBe(403);
  expect((await call('POST', '/api/v1/stores/acme-1/dreams', keys.writer.key, body)).status).toBe(403);
  expect((await call('POST', '/api/v1/stores/other-1/dreams', keys.operator.key, body)).status).toBe(404);
  expect((await call('GET', '/api/v1/stores/other-1/dreams', keys.reader.key)).status).toBe(404);
  expect((await call('GET', '/api/v1/stores/acme-1/dreams', null)).status).toBe(401);
  const long = await call('POST', '/api/v1/stores/acme-1/dreams', keys.operator.key, { ...body, instructions: 'x'.repeat(4097) });
  expect(long.status).toBe(400);
  expect(JSON.stringify(long.json)).toContain('at most 4096');
  expect((await call('POST', '/api/v1/stores/acme-1/dreams', keys.operator.key, { ...body, inputs: [{ type: 'sessions', session_ids: ['sess_nope'] }] })).status).toBe(400);
  expect((await call('GET', '/api/v1/stores/acme-1/dreams/drm_000000000000000000000000', keys.reader.key)).status).toBe(404);
  expect((await call('GET', '/api/v1/stores/acme-1/dreams', keys.reader.key)).json.data).toEqual([]);
});

it('a second dream while one runs is 409 naming the first; cancel stops it at its next turn', async () => {
  replies.push(null); // the first request waits
  const started = await call('POST', '/api/v1/stores/acme-1/dreams', keys.operator.key, { inputs: [{ type: 'sessions', session_ids: ['sess_a'] }], model: 'claude-test-model', instructions: 'be brief' });
  expect(started.status).toBe(201);
  const id = String(started.json.id);
  expect(started.json).toMatchObject({ type: 'dream', status: 'pending', model: 'claude-test-model', instructions: 'be brief', inputs: [{ type: 'sessions', session_ids: ['sess_a'] }] });
  await until(`/api/v1/stores/acme-1/dreams/${id}`, 'running');
  const second = await call('POST', '/api/v1/stores/acme-1/dreams', keys.operator.key, { inputs: [], model: 'claude-test-model' });
  expect(second.status).toBe(409);
  expect(JSON.stringify(second.json)).toContain(id);
  expect((await call('POST', `/api/v1/stores/acme-1/dreams/${id}/cancel`, keys.reader.key)).status).toBe(403);
  const cancel = await call('POST', `/api/v1/stores/acme-1/dreams/${id}/cancel`, keys.operator.key);
  expect(cancel.status).toBe(200);
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  held.shift()!(); // the reply arrives; its tool call must not run
  const ended = await until(`/api/v1/stores/acme-1/dreams/${id}`, 'canceled');
  expect(ended.ended_at).not.toBeNull();
  expect((ended.usage as { input_tokens: number }).input_tokens).toBe(7);
});

it('a dream runs in the background to completion; its branch is a review', async () => {
  replies.push(
    message([{ type: 'tool_use', id: 'toolu_s1', name: 'memory', input: { command: 'str_replace', path: '/memories/tea.md', old_str: 'green', new_str: 'black (per session sess_a)' } }]),
    message([{ type: 'text', text: 'done' }]),
  );
  const started = await call('POST', '/api/v1/stores/acme-1/dreams', keys.operator.key, { inputs: [{ type: 'sessions', session_ids: ['sess_a'] }], model: 'claude-test-model' });
  expect(started.status).toBe(201);
  const done = await until(`/api/v1/stores/acme-1/dreams/${String(started.json.id)}`, 'completed');
  expect(done.outputs).toEqual([{ type: 'review', review_id: expect.stringMatching(/^rv_/), branch: `refs/heads/dream/${String(started.json.id)}`, files_touched: ['/memories/tea.md'] }]);
  expect((done.usage as { input_tokens: number; output_tokens: number }).output_tokens).toBe(6);
  const list = await call('GET', '/api/v1/stores/acme-1/dreams', keys.reader.key);
  expect((list.json.data as Array<{ id: string; status: string }>).map((d) => d.status)).toEqual(['completed', 'canceled']);
  // Its review, decided through the server's review API: the dream's call lands on main.
  const reviewId = (done.outputs as Array<{ review_id: string }>)[0].review_id;
  const reviews = await call('GET', '/api/v1/stores/acme-1/reviews', keys.operator.key);
  expect((reviews.json.reviews as Array<{ id: string; dream?: string; state: string }>).find((r) => r.id === reviewId)).toMatchObject({ dream: started.json.id, state: 'pending' });
  const approved = await call('POST', `/api/v1/stores/acme-1/reviews/${reviewId}/approve`, keys.operator.key, {});
  expect(approved.status).toBe(200);
  expect((approved.json.commits as string[]).length).toBe(1);
  const tea = await call('POST', '/api/v1/stores/acme-1/tool-calls', keys.writer.key, { session: 'sess_check', tool_use: { type: 'tool_use', id: 'toolu_check', name: 'memory', input: { command: 'view', path: '/memories/tea.md' } } });
  expect(JSON.stringify(tea.json)).toContain('black (per session sess_a)');
});
