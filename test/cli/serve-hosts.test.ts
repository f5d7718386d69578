/**
 * `memgit serve --allowed-host / --public-url`: a LAN address or a reverse proxy's host is answered, any
 * other Host still gets 421, and the start-up lines say which hosts the server answers to. And its one
 * budget for the caches of the store and its UI (`--cache-size`), stated at start-up.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import type { MemoryStore } from '../../src/store/memory-store';
import { call, create, dispose, git, newStore } from '../rollback/helpers';

/** A token with real entropy (the server refuses low-variety ones). */
const OPERATOR_TOKEN = randomBytes(24).toString('base64url');

jest.setTimeout(180_000);

let store: MemoryStore;

beforeAll(async () => {
  await ensureBuilt();
  store = await newStore();
  await call(store, 'toolu_01', create('/memories/a.md', 'a\n'));
  await store.close();
});

afterAll(async () => dispose(store));

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
});

/** Start `memgit serve` and wait until its stdout matches `ready`. */
function serve(args: string[], ready = /any other Host gets 421\n/): Promise<{ port: number; stdout: () => string; stop: () => Promise<void> }> {
  const env = { ...process.env, MEMGIT_TOKEN: OPERATOR_TOKEN };
  const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', store.dir, '--port', '0', ...args], { env, cwd: REPO_ROOT });
  children.push(child);
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /at http:\/\/[^/]+:(\d+)\//.exec(out);
      if (match && ready.test(out)) resolve({ port: Number(match[1]), stdout: () => out, stop });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

function request(port: number, options: { path?: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: options.path ?? '/', method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.once('error', reject);
    req.end(options.body);
  });
}

it('answers the allowed hosts and the public URL host, refuses any other Host with 421, and says so at start-up', async () => {
  const server = await serve(['--allowed-host', '192.168.1.20', '--allowed-host', 'Memory.LAN', '--public-url', 'https://memory.example.com']);
  expect(server.stdout()).toContain('memgit: public URL https://memory.example.com/\n');
  // The loopback names, then the allowed hosts and the bound host, each once, ports dropped, lower-cased.
  expect(server.stdout()).toContain(
    'memgit: answers requests for Host localhost, 127.0.0.1, [::1], 192.168.1.20, memory.lan, memory.example.com; any other Host gets 421\n',
  );
  try {
    for (const host of ['192.168.1.20:3000', 'memory.lan', 'memory.example.com', `127.0.0.1:${server.port}`]) {
      expect({ host, status: (await request(server.port, { headers: { host } })).status }).toEqual({ host, status: 200 });
    }
    const refused = await request(server.port, { headers: { host: 'evil.example' } });
    expect(refused.status).toBe(421);
    // Behind the proxy: the browser's https origin matches once the proxy says the scheme was https.
    const post = (extra: Record<string, string>) =>
      request(server.port, {
        path: '/api/rollback/revert',
        method: 'POST',
        headers: {
          host: 'memory.example.com',
          origin: 'https://memory.example.com',
          'content-type': 'application/json',
          authorization: `Bearer ${OPERATOR_TOKEN}`,
          ...extra,
        },
        body: JSON.stringify({ ref: 'toolu_01', operator: 'ci', dryRun: true }),
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ 'x-forwarded-proto': 'https' })).status).toBe(200);
    expect(git(store.dir, 'rev-list', '--count', 'HEAD')).toBe('2'); // a dry run wrote nothing
  } finally {
    await server.stop();
  }
});

it('on every interface without an allowed host, says how other machines can reach it; a bad host is a usage error', async () => {
  const server = await serve(['--host', '0.0.0.0'], /\(or --public-url\)\n/);
  try {
    expect(server.stdout()).toContain('add --allowed-host <address or name> (or --public-url)');
  } finally {
    await server.stop();
  }
  const bad = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', store.dir, '--allowed-host', '*'], { cwd: REPO_ROOT });
    child.once('exit', (code) => resolve(code));
  });
  expect(bad).toBe(64);
});

it('stops cleanly (exit 0) on a SIGTERM that comes as soon as it answers, before its start-up lines', async () => {
  // The docs test stops a server right after its first answer; the signal handlers must be in place from the
  // moment it listens (it used to register itself as the store's holder first, and died of the signal).
  const free = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const results: Array<{ exit: number | null; signal: NodeJS.Signals | null }> = [];
  for (let i = 0; i < 10; i += 1) {
    const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', store.dir, '--port', String(free)], { env: { ...process.env, MEMGIT_TOKEN: OPERATOR_TOKEN }, cwd: REPO_ROOT });
    children.push(child);
    const exited = new Promise<{ exit: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (exit, signal) => resolve({ exit, signal })));
    // A connection is accepted as soon as it listens: signal at that moment.
    for (;;) {
      const connected = await new Promise<boolean>((resolve) => {
        const socket = net.connect(free, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (connected || child.exitCode !== null) break;
    }
    child.kill('SIGTERM');
    results.push(await exited);
  }
  expect(results).toEqual(Array.from({ length: 10 }, () => ({ exit: 0, signal: null })));
});

test('--cache-size: one budget for the caches of the store and its UI, 64 MiB by default, stated at start-up; 0 or nonsense is a usage error', async () => {
  const plain = await serve([]);
  expect(plain.stdout()).toContain('memgit: caches of the store and its UI: up to 64 MiB together (--cache-size)\n');
  await plain.stop();
  const small = await serve(['--cache-size', '16mb']);
  expect(small.stdout()).toContain('up to 16 MiB together (--cache-size)');
  expect((await request(small.port, { path: '/' })).status).toBe(200);
  await small.stop();
  for (const bad of ['0', 'lots']) {
    const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', store.dir, '--port', '0', '--cache-size', bad], { cwd: REPO_ROOT });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(64);
    expect(err).toMatch(/--cache-size/);
  }
});
