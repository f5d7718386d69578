/**
 * The bound of running dreams per server (issue 28, docs/dreams.md): `memgit server --max-dreams N` as users
 * run it (the built CLI, a Messages API stand-in on 127.0.0.1 that holds its replies), and the same option
 * of startMemgitServer. Over the bound a start is 429 naming the flag and starts nothing; once a dream has
 * ended the next one starts. A bad value is a usage error (exit 64) and the server does not start.
 */
import { spawnSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import pino from 'pino';
import { startMemgitServer } from '../../src';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeKey, spawnServer, type SpawnedServer } from './spawn-server';

let root = '';
let api: http.Server;
let apiUrl = '';
/** Requests the Messages API stand-in holds until released (each answers with a text reply: the dream completes). */
const held: Array<() => void> = [];
let server: SpawnedServer | undefined;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('memgit-max-dreams-');
  for (const id of ['acme-1', 'acme-2', 'acme-3']) {
    const store = await MemoryStore.open(path.join(root, id), { log: () => undefined });
    await store.execute({ type: 'tool_use', id: 'toolu_seed', name: 'memory', input: { command: 'create', path: '/memories/tea.md', file_text: '- Tea: green\n' } }, { session: 'sess_a' });
    await store.close();
  }
  api = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      held.push(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'msg_held', type: 'message', role: 'assistant', model: 'claude-test-model', content: [{ type: 'text', text: 'nothing to change' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } }));
      }),
    );
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', () => resolve()));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await server?.stop();
  api.closeAllConnections();
  await new Promise<void>((resolve) => api.close(() => resolve()));
  removeDir(root);
});

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI_MAIN, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
}

async function until(url: string, key: string, status: string): Promise<Record<string, unknown>> {
  for (let tries = 0; ; tries++) {
    const got = (await (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, unknown>;
    if (got.status === status) return got;
    if (tries > 600) throw new Error(`dream still ${JSON.stringify(got.status)} after 600 polls`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('--max-dreams: in --help; a bad value is a usage error (exit 64) and starts no server', () => {
  const help = cli(['server', '--help']);
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/--max-dreams <n>\s+dreams running at once on this server, all stores\s+together/);
  expect(help.stdout).toContain('(default: 2)');
  for (const bad of ['0', '-1', 'two', '1.5']) {
    const run = cli(['server', '--root', path.join(root, 'never'), '--port', '0', '--max-dreams', bad]);
    expect(run.status).toBe(64);
    expect(run.stderr).toContain("option '--max-dreams <n>' argument");
    expect(run.stderr).toContain('expected a positive integer');
    expect(run.stdout).toBe('');
  }
});

test('memgit server --max-dreams 1: a second dream on another store is 429 naming the bound; once the first ends the next starts', async () => {
  const operator = await makeKey(root, 'acme-*', 'operator');
  server = await spawnServer(root, ['--max-dreams', '1'], { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key', ANTHROPIC_BASE_URL: apiUrl });
  const start = (store: string) =>
    fetch(`${server!.url}/api/v1/stores/${store}/dreams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ type: 'sessions', session_ids: ['sess_a'] }], model: 'claude-test-model' }),
    });
  const first = await start('acme-1');
  expect(first.status).toBe(201);
  const firstId = String(((await first.json()) as { id: string }).id);
  // Its first request is held by the stand-in: the dream is running.
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));

  const over = await start('acme-2');
  expect(over.status).toBe(429);
  const body = (await over.json()) as { error: { type: string; message: string } };
  expect(body.error.type).toBe('rate_limit_error');
  expect(body.error.message).toContain('1 dream(s) are running on this server, its bound (memgit server --max-dreams 1)');
  // Nothing was started on acme-2.
  const listed = await fetch(`${server.url}/api/v1/stores/acme-2/dreams`, { headers: { authorization: `Bearer ${operator.key}` } });
  expect(((await listed.json()) as { data: unknown[] }).data).toEqual([]);

  held.shift()!();
  await until(`${server.url}/api/v1/stores/acme-1/dreams/${firstId}`, operator.key, 'completed');
  // The job leaves the server's count once its dream has ended: poll until the next start is taken.
  let next: Response;
  for (let tries = 0; ; tries++) {
    next = await start('acme-2');
    if (next.status !== 429 || tries > 200) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(next.status).toBe(201);
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  held.shift()!();
  await until(`${server.url}/api/v1/stores/acme-2/dreams/${String(((await next.json()) as { id: string }).id)}`, operator.key, 'completed');
  expect(await server.stop()).toBe(0);
  server = undefined;
});

test('startMemgitServer takes the same bound (maxDreams) and refuses a bad one', async () => {
  await expect(startMemgitServer({ root, port: 0, logger: pino({ level: 'silent' }), maxDreams: 0 })).rejects.toThrow('maxDreams: expected a positive integer, got 0');
  await expect(startMemgitServer({ root, port: 0, logger: pino({ level: 'silent' }), maxDreams: 1.5 })).rejects.toThrow(TypeError);
  const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test-not-a-real-key';
  process.env.ANTHROPIC_BASE_URL = apiUrl;
  const running = await startMemgitServer({ root, port: 0, logger: pino({ level: 'silent' }), maxDreams: 1 });
  try {
    const operator = await makeKey(root, 'acme-*', 'operator');
    const start = (store: string) =>
      fetch(`${running.url}/api/v1/stores/${store}/dreams`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: [], model: 'claude-test-model' }),
      });
    const first = await start('acme-3');
    expect(first.status).toBe(201);
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const over = await start('acme-1');
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain('--max-dreams 1');
    held.shift()!();
    await until(`${running.url}/api/v1/stores/acme-3/dreams/${String(((await first.json()) as { id: string }).id)}`, operator.key, 'completed');
  } finally {
    await running.close();
    if (saved.key === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = saved.key;
    if (saved.url === undefined) delete process.env.ANTHROPIC_BASE_URL;
    else process.env.ANTHROPIC_BASE_URL = saved.url;
  }
});

test('under memgit server, "Start a dream" in a store\'s UI is one of the server\'s dream jobs: within --max-dreams, 429 on the form beyond it', async () => {
  const token = 'max-dreams-ui-operator-token-0123456789';
  const reader = await makeKey(root, 'acme-*', 'read');
  const operator = await makeKey(root, 'acme-*', 'operator');
  server = await spawnServer(root, ['--max-dreams', '1'], { ...process.env, MEMGIT_TOKEN: token, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key', ANTHROPIC_BASE_URL: apiUrl });
  const url = server.url;
  const basic = `Basic ${Buffer.from(`me:${reader.key}`).toString('base64')}`;
  const jar = new Map<string, string>();
  const request = async (urlPath: string, form?: Record<string, string>) => {
    const response = await fetch(`${url}${urlPath}`, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { authorization: basic, origin: url, cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  };
  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];
  const anonymous = await request('/stores/acme-3/dreams/new');
  expect(anonymous.status).toBe(303);
  expect(anonymous.location).toBe('/stores/acme-3/login?next=%2Fdreams%2Fnew');
  const login = await request(anonymous.location!);
  const loggedIn = await request('/stores/acme-3/login', { _csrf: csrfOf(login.text), next: '/dreams/new', operator: 'ci', token });
  expect(loggedIn.location).toBe('/stores/acme-3/dreams/new');
  const form = await request(loggedIn.location!);
  expect(form.status).toBe(200);
  expect(form.text).toContain('action="/stores/acme-3/dreams"');
  const started = await request('/stores/acme-3/dreams', { _csrf: csrfOf(form.text), sessions: 'sess_a', instructions: 'from the UI' });
  expect(started.status).toBe(303);
  const id = /^\/stores\/acme-3\/dreams\/(drm_[0-9a-f]{24})$/.exec(started.location!)![1];
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  // The server's bound holds for the UI too: another store's form is answered 429, and nothing starts there.
  const other = await request('/stores/acme-1/dreams/new');
  expect(other.status).toBe(200);
  const over = await request('/stores/acme-1/dreams', { _csrf: csrfOf(other.text), sessions: '' });
  expect(over.status).toBe(429);
  expect(over.text).toContain('1 dream(s) are running on this server, its bound (memgit server --max-dreams 1)');
  const before = (await (await fetch(`${url}/api/v1/stores/acme-1/dreams`, { headers: { authorization: `Bearer ${operator.key}` } })).json()) as { data: unknown[] };
  held.shift()!();
  const done = await until(`${url}/api/v1/stores/acme-3/dreams/${id}`, operator.key, 'completed');
  expect(done.instructions).toBe('from the UI');
  const after = (await (await fetch(`${url}/api/v1/stores/acme-1/dreams`, { headers: { authorization: `Bearer ${operator.key}` } })).json()) as { data: unknown[] };
  expect(after.data).toEqual(before.data);
  const page = await request(`/stores/acme-3/dreams/${id}`);
  expect(page.text).toMatch(/Status<\/dt><dd>completed/);
  expect(await server.stop()).toBe(0);
  server = undefined;
});
