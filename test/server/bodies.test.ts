/**
 * Request bodies on `memgit server` (issue 25, item 7): bodies in flight are held within a global budget
 * and a per-key one, so one key's unfinished bodies cannot take the server's memory or another key's
 * room; a request over budget is told so at once (429 for the key's own budget, 503 for the server's,
 * both with Retry-After) and nothing is written; a body that does not arrive in time gets 408.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';
import { eventually, settlesWithin, unfinishedPost, UnfinishedRequest } from './mcp-raw';

const base = makeTempDir('memgit-server-bodies-');
const servers: SpawnedServer[] = [];
const MiB = 1024 * 1024;

beforeAll(async () => {
  await ensureBuilt();
}, 240_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  removeDir(base);
});

async function start(name: string, args: string[], patterns: string[]) {
  const root = path.join(base, name);
  fs.mkdirSync(root);
  const keys: Array<{ key: string; id: string }> = [];
  for (const pattern of patterns) keys.push(await makeKey(root, pattern, 'write'));
  const server = await spawnServer(root, args);
  servers.push(server);
  return { root, keys, server };
}

const toolCallsUrl = (url: string, store: string) => `${url}/api/v1/stores/${store}/tool-calls`;
const createCall = (id: string) => ({ tool_use: toolUse(id, { command: 'create', path: '/memories/a.md', file_text: 'a' }), session: 'sess_bodies' });

describe('bodies in flight, with the default budgets', () => {
  it('refuses a key\'s body beyond its own budget (429) and any body beyond the server\'s (503), at once, writing nothing', async () => {
    const { root, keys, server } = await start('defaults', [], ['k0-*', 'k1-*', 'k2-*', 'k3-*', 'k4-*']);
    const probe = await makeKey(root, 'probe-*', 'write', ['--no-create']);
    const hanging: UnfinishedRequest[] = [];
    const unfinished = (k: number) => unfinishedPost(toolCallsUrl(server.url, `k${k}-1`), { Authorization: `Bearer ${keys[k].key}` }, 8 * MiB, '{"tool_use":');
    try {
      // Four bodies of the largest size (--body-limit 8mb) fill a key's 32 MiB: of five, one is refused at once.
      const five = [0, 1, 2, 3, 4].map(() => unfinished(0));
      hanging.push(...five);
      expect(await eventually(async () => (await Promise.all(five.map((h) => settlesWithin(h.answer, 10)))).some(Boolean), 10_000)).toBe(true);
      const settled = await Promise.all(five.map((h) => settlesWithin(h.answer, 200)));
      expect(settled.filter(Boolean)).toHaveLength(1);
      const refused = await five[settled.indexOf(true)].answer;
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(refused.text)).toEqual({ error: { type: 'rate_limit_error', message: expect.stringMatching(/request bodies/), code: 'key_bodies_in_flight' } });

      // Three more keys fill the server's 128 MiB (seen by a key that may not create stores: 404 until then,
      // 503 once full); then even a small complete call of a fifth key is refused, and writes nothing.
      for (let k = 1; k <= 3; k++) for (let i = 0; i < 4; i++) hanging.push(unfinished(k));
      const probeStatus = async () => (await postToolCall(server.url, 'probe-1', probe.key, createCall('toolu_probe'))).status;
      expect(await eventually(async () => (await probeStatus()) === 503, 20_000)).toBe(true);
      const busy = await postToolCall(server.url, 'k4-1', keys[4].key, createCall('toolu_k4_1'));
      expect(busy.status).toBe(503);
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(JSON.parse(busy.text)).toEqual({ error: { type: 'overloaded_error', message: expect.stringMatching(/request bodies/), code: 'server_bodies_full' } });
      expect(fs.existsSync(path.join(root, 'k4-1'))).toBe(false);

      // Room comes back as soon as the held bodies go.
      for (const h of hanging.splice(0)) h.abort();
      expect(await eventually(async () => (await probeStatus()) === 404, 20_000)).toBe(true);
      expect((await postToolCall(server.url, 'k4-1', keys[4].key, createCall('toolu_k4_2'))).status).toBe(200);
    } finally {
      for (const h of hanging) h.abort();
    }
  }, 90_000);
});

describe('a body timeout', () => {
  it('answers 408 to a body that does not arrive in time, closes the connection and frees its room', async () => {
    const { root, keys, server } = await start('timeout', ['--body-timeout', '1', '--key-body-budget', '8mb'], ['t-*']);
    const slow = unfinishedPost(toolCallsUrl(server.url, 't-1'), { Authorization: `Bearer ${keys[0].key}` }, 8 * MiB, '{"tool_use":');
    expect(await settlesWithin(slow.answer, 20_000)).toBe(true);
    const answer = await slow.answer;
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.text)).toEqual({ error: { type: 'timeout_error', message: expect.stringMatching(/1 s/), code: 'body_timeout' } });
    expect(await settlesWithin(slow.closed, 10_000)).toBe(true);
    expect(fs.existsSync(path.join(root, 't-1'))).toBe(false);
    // The key's whole budget (one body of 8 MiB) is free again.
    const ok = await postToolCall(server.url, 't-1', keys[0].key, createCall('toolu_t1'));
    expect(ok.status).toBe(200);
  }, 60_000);

  it('reserves the whole --body-limit for a body sent without a length', async () => {
    const { root, keys, server } = await start('chunked', ['--key-body-budget', '8mb'], ['c-*']);
    const chunked = unfinishedPost(toolCallsUrl(server.url, 'c-1'), { Authorization: `Bearer ${keys[0].key}` }, null, '{"tool_use":');
    // The probe has no session: 400 before any store is touched once its body is read, 429 while it cannot be.
    const refusedWhileHeld = async () => (await postToolCall(server.url, 'c-1', keys[0].key, { tool_use: {} })).status === 429;
    expect(await eventually(refusedWhileHeld, 10_000)).toBe(true);
    expect(fs.existsSync(path.join(root, 'c-1'))).toBe(false);
    chunked.abort();
    expect(await eventually(async () => (await postToolCall(server.url, 'c-1', keys[0].key, createCall('toolu_c2'))).status === 200, 10_000)).toBe(true);
  }, 60_000);

  it('refuses to start when the budgets cannot hold one body of --body-limit', async () => {
    const root = path.join(base, 'bad-options');
    fs.mkdirSync(root);
    await expect(spawnServer(root, ['--body-limit', '8mb', '--key-body-budget', '1mb'])).rejects.toThrow(/--key-body-budget .*--body-limit/);
  }, 60_000);
});
