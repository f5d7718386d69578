/**
 * A short-lived process still replicates its last commit: `store.close()` waits (up to
 * replicationFlushMs) for the push under way and then for one more when commits arrived during it. The
 * case that lost a commit: a store opens (its catch-up push starts and reads HEAD), a call commits while
 * that push is on the wire, and the process closes; the docs' `memgit exec` example showed it. A slow
 * link (a proxy that delays every request) makes the overlap certain. Checked with git on the server.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { addRemote } from '../../src/store/replication';
import { createBareRepository, GitHttpServer, startGitHttpServer } from '../support/git-http-server';
import { makeTempDir, removeDir } from './git-helpers';

const USER = 'memgit';
const TOKEN = 'replica-close-secret-8d1e5b';
const TOKEN_ENV = 'MEMGIT_TEST_REPLICA_CLOSE_TOKEN';
const QUIET = { log: () => undefined };

let root: string;
let server: GitHttpServer;
let proxy: http.Server;
let proxyUrl: string;
let delayMs = 0;

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  root = makeTempDir('memgit-repl-close-');
  server = await startGitHttpServer({ root: path.join(root, 'server'), username: USER, password: TOKEN });
  // Every request waits `delayMs` before it is forwarded to the git server.
  proxy = http.createServer((req, res) => {
    setTimeout(() => {
      const target = new URL(req.url ?? '/', server.url);
      const forward = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    }, delayMs);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await server.close();
  removeDir(root);
  delete process.env[TOKEN_ENV];
});

function served(bare: string): string {
  return spawnSync('git', ['rev-parse', '--verify', '-q', 'refs/heads/main'], { cwd: bare, encoding: 'utf8' }).stdout.trim();
}

test('a commit made while the catch-up push of a newly opened store is on the wire is pushed by close()', async () => {
  createBareRepository(path.join(root, 'server'), 'overlap.git');
  const bare = path.join(root, 'server', 'overlap.git');
  const dir = path.join(root, 'store');
  let store = await MemoryStore.open(dir, QUIET);
  await addRemote({ fs, gitdir: store.gitdir }, { name: 'backup', url: `${proxyUrl}/overlap.git`, tokenEnv: TOKEN_ENV, auto: true });
  await store.close();
  // First open: the catch-up push carries the store's first commit; close waits for it.
  store = await MemoryStore.open(dir, { ...QUIET, replicate: { batchMs: 10 } });
  await store.close();
  const first = served(bare);
  expect(first).toMatch(/^[0-9a-f]{40}$/);

  delayMs = 400;
  // What is tested is that close() pushes the later commit, not how long a loaded machine takes: a long flush bound.
  store = await MemoryStore.open(dir, { ...QUIET, replicate: { batchMs: 10 }, replicationFlushMs: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 100)); // the catch-up push has started and read HEAD
  const result = await store.execute({ type: 'tool_use', id: 'toolu_overlap', name: 'memory', input: { command: 'create', path: '/memories/a.md', file_text: 'a\n' } }, { session: 'sess_overlap' });
  expect(result.is_error).toBeUndefined();
  const head = await store.refreshHead();
  expect(head).not.toBe(first);
  await store.close(); // waits up to replicationFlushMs in all
  expect(served(bare)).toBe(head);
}, 60_000);
