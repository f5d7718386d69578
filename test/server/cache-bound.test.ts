/**
 * Issue 25, item 7 (caches): one key reading its own stores must not exhaust the server's memory. The
 * audit UI's caches, decoded blobs, trees and pack objects of every open store share one budget
 * (`--cache-size`); before, each open store had its own ~168 MiB of UI caches (and more), and a server with
 * a small heap died once a tenant had read enough stores. Here: a server limited to a 112 MiB heap, one key
 * writing a 0.9 MiB file twice into each of 30 stores and reading every commit page and file page of each.
 * Without the shared budget the process runs out of heap after 10 to 20 stores (V8 aborts); with it,
 * every answer is a 200 and the process lives.
 */
import * as fs from 'node:fs';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { basicAuth, expectNoUnexpected, makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';

const STORES = 30;
const HEAP_MB = 112;

let dir: string;
let server: SpawnedServer;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('memgit-cache-bound-');
}, 240_000);

afterAll(async () => {
  await server?.stop();
  removeDir(dir);
});

test(`one key reading ${STORES} stores of large files: the caches stay within --cache-size and the process lives (heap ${HEAP_MB} MiB)`, async () => {
  const key = await makeKey(dir, 'big-*', 'write');
  server = await spawnServer(dir, ['--cache-size', '16mb'], { ...process.env, NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` });
  const lines = Array.from({ length: 13_000 }, (_, i) => `line ${i} of the big file, with some words to make it longer ${i * 7}`);
  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  for (let s = 0; s < STORES; s++) {
    const store = `big-${s}`;
    const write = (id: string, input: Record<string, unknown>) => postToolCall(server.url, store, key.key, { tool_use: toolUse(id, input), session: 'sess_big' });
    count((await write(`toolu_big_${s}_a`, { command: 'create', path: '/memories/big.md', file_text: `${lines.map((l) => `${s} ${l}`).join('\n')}\n` })).status);
    count((await write(`toolu_big_${s}_b`, { command: 'str_replace', path: '/memories/big.md', old_str: `${s} line 100 of`, new_str: `${s} LINE 100 of` })).status);
    const listed = await fetch(`${server.url}/api/v1/stores/${store}/commits`, { headers: { authorization: `Bearer ${key.key}` } });
    count(listed.status);
    const rows = ((await listed.json()) as { rows: Array<{ commit: string }> }).rows;
    // Every commit's page, and the file's page at each commit that has it (all but the store's first).
    const pages = [...rows.map((r) => `/stores/${store}/commits/${r.commit}`), ...rows.slice(0, -1).map((r) => `/stores/${store}/files/big.md?at=${r.commit}`)];
    for (const page of pages) {
      const answer = await fetch(`${server.url}${page}`, { headers: basicAuth(key.key), signal: AbortSignal.timeout(60_000) });
      await answer.arrayBuffer();
      count(answer.status);
    }
  }
  expect(Object.fromEntries(statuses)).toEqual({ 200: STORES * (3 + 3 + 2) });
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(fs.readdirSync(dir).filter((name) => name.startsWith('big-'))).toHaveLength(STORES);
  expectNoUnexpected(server);
  expect(server.stderr()).not.toMatch(/heap out of memory/i);
}, 180_000);
