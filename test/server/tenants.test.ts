/**
 * Issue 25: tenants who do not trust each other on one `memgit server` (spawned from dist/, loopback only).
 * No request ends the process, one key's failed logins lock out nobody else, store creation is bounded per
 * key and stores per size, the root and its key file must be the server user's alone, a store's `.git`
 * must be a real folder, every authenticated answer is `no-store` and every answer `nosniff`, every commit
 * names its key and sessions belong to their key, and store ids are decoded once and never shadow
 * another store by case or a trailing dot. Commits are checked with the git CLI.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { gitReport, makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { basicAuth, expectNoUnexpected, makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';

type Key = { key: string; id: string };

const base = makeTempDir('memgit-tenants-');
const root = path.join(base, 'root');
let server: SpawnedServer;
let acme: Key;
let acme2: Key;
let reader: Key;
let operator: Key;
let everything: Key;
let quota: Key;

beforeAll(async () => {
  await ensureBuilt();
  fs.mkdirSync(root, { mode: 0o700 });
  acme = await makeKey(root, 'acme-*', 'write');
  acme2 = await makeKey(root, 'acme-*', 'write');
  reader = await makeKey(root, 'acme-*', 'read');
  operator = await makeKey(root, 'acme-*', 'operator');
  everything = await makeKey(root, '*', 'write');
  quota = await makeKey(root, 'quota-*', 'write');
  server = await spawnServer(root, ['--max-stores-per-key', '5', '--max-store-bytes', '400kb']);
}, 240_000);

afterEach(() => expectNoUnexpected(server));

afterAll(async () => {
  await server?.stop();
  removeDir(base);
});

const LIMIT = { signal: () => AbortSignal.timeout(20_000) };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (store: string, key: Key, id: string, input: Record<string, unknown>, session = 'sess_tenant') =>
  postToolCall(server.url, store, key.key, { tool_use: toolUse(id, input), session });
const create = (file: string, text = 'x\n') => ({ command: 'create', path: `/memories/${file}`, file_text: text });
const errorOf = (text: string) => (JSON.parse(text) as { error: { type: string; message: string } }).error;
const alive = async () => (await fetch(`${server.url}/healthz`, { signal: LIMIT.signal() })).status;

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'tenant-test', version: '1' } } };
const mcpPost = (url: string, store: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/stores/${store}/mcp`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: LIMIT.signal(),
  });

async function mcpClient(store: string, key: string, name = 'tenant-test'): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/stores/${store}/mcp`), { requestInit: { headers: bearer(key) } });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}
const textOf = (result: CallToolResult) => (result.content as Array<{ text: string }>).map((c) => c.text).join('');

describe('1. no request can end the process', () => {
  it('a folder whose .git is a file is not a store: the store list, the tool API and the read API answer, the process lives', async () => {
    expect((await call('acme-1', acme, 'toolu_one1', create('a.md'))).status).toBe(200);
    const odd = path.join(root, 'acme-gitfile');
    fs.mkdirSync(odd);
    fs.writeFileSync(path.join(odd, '.git'), 'gitdir: ../acme-1/.git\n');
    const list = await fetch(`${server.url}/`, { headers: basicAuth(reader.key), signal: LIMIT.signal() });
    expect(list.status).toBe(200);
    const html = await list.text();
    expect(html).toContain('href="/stores/acme-1/"');
    expect(html).not.toContain('acme-gitfile');
    const json = await fetch(`${server.url}/api/v1/stores`, { headers: bearer(reader.key), signal: LIMIT.signal() });
    expect(((await json.json()) as { stores: string[] }).stores).not.toContain('acme-gitfile');
    const write = await call('acme-gitfile', acme, 'toolu_one2', create('b.md'));
    expect(write.status).toBe(409);
    expect(errorOf(write.text).type).toBe('conflict_error');
    const read = await fetch(`${server.url}/api/v1/stores/acme-gitfile/commits`, { headers: bearer(reader.key), signal: LIMIT.signal() });
    expect(read.status).toBe(404);
    expect(fs.readdirSync(odd)).toEqual(['.git']);
    expect(await alive()).toBe(200);
  });
});

describe('2. failed operator logins', () => {
  it('a key sent to the UI rollback API is never a failed login: the operator key and the operator login still work', async () => {
    expect((await call('acme-2', acme, 'toolu_two1', create('r.md'))).status).toBe(200);
    for (let i = 0; i < 12; i++) {
      const tried = await fetch(`${server.url}/stores/acme-2/api/rollback/revert`, {
        method: 'POST',
        headers: { ...bearer(reader.key), 'content-type': 'application/json' },
        body: JSON.stringify({ ref: 'toolu_two1' }),
        signal: LIMIT.signal(),
      });
      expect(tried.status).toBe(401);
    }
    const revert = await fetch(`${server.url}/api/v1/stores/acme-2/rollback/revert`, {
      method: 'POST',
      headers: { ...bearer(operator.key), 'content-type': 'application/json' },
      body: JSON.stringify({ ref: 'toolu_two1', reason: 'test' }),
      signal: LIMIT.signal(),
    });
    expect(revert.status).toBe(201);
    // The rollback names the operator key too (Memory-Key), from the key the server checked.
    expect(gitReport(path.join(root, 'acme-2')).commits.at(-1)!.trailers).toContain(`Memory-Key: ${operator.id}`);
  });

  it('wrong tokens at the login form lock out that key only: another key logs in with the right token', async () => {
    expect((await call('acme-1', acme, 'toolu_log', { command: 'view', path: '/memories' })).status).toBe(200);
    // The token is printed right after the URL: wait for its line.
    for (let i = 0; i < 100 && !/operator token for rollbacks .*: \S+\n/.test(server.stderr()); i++) await new Promise((r) => setTimeout(r, 50));
    const token = /operator token for rollbacks .*: (\S+)/.exec(server.stderr())![1];
    const login = async (key: string, given: string) => {
      const jar = new Map<string, string>();
      const keep = (response: Response) => {
        for (const cookie of response.headers.getSetCookie()) {
          const [pair] = cookie.split(';');
          jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
        }
      };
      const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const form = await fetch(`${server.url}/stores/acme-1/login`, { headers: basicAuth(key), signal: LIMIT.signal() });
      keep(form);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
      const answer = await fetch(`${server.url}/stores/acme-1/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...basicAuth(key), origin: server.url, cookie: cookies(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, operator: 'ci', token: given, next: '/' }).toString(),
        signal: LIMIT.signal(),
      });
      await answer.text();
      return answer.status;
    };
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push(await login(reader.key, `wrong-token-${i}-xxxxxxxxxxxxxxxxxxxx`));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    expect(await login(acme.key, token)).toBe(303);
  });
});

describe('6. store creation is bounded', () => {
  it('a key creates at most --max-stores-per-key stores: then 403 naming the limit, and nothing is written', async () => {
    const made = ['quota-1', 'quota-2', 'quota-3', 'quota-4', 'quota-5'];
    for (const id of made) expect((await call(id, quota, `toolu_q_${id}`, create('q.md'))).status).toBe(200);
    const before = fs.readdirSync(root).sort();
    const refused = await call('quota-6', quota, 'toolu_q_6', create('q.md'));
    expect(refused.status).toBe(403);
    expect(errorOf(refused.text)).toEqual({ type: 'quota_exceeded_error', message: expect.stringContaining('--max-stores-per-key 5'), code: 'quota_exceeded' });
    // Over MCP a store is created by its first tool call; a session on a store the key may not create
    // is refused at once, naming the limit.
    const overMcp = await mcpPost(server.url, 'quota-7', quota.key, INITIALIZE);
    expect(overMcp.status).toBe(403);
    expect(errorOf(await overMcp.text())).toEqual({ type: 'quota_exceeded_error', message: expect.stringContaining('--max-stores-per-key 5'), code: 'quota_exceeded' });
    expect(fs.readdirSync(root).sort()).toEqual(before);
    // Its existing stores still take writes, and another key's creations are not affected.
    expect((await call('quota-1', quota, 'toolu_q_1b', create('more.md'))).status).toBe(200);
    expect((await call('quota-9', everything, 'toolu_q_9', create('q.md'))).status).toBe(200);
    const record = JSON.parse(fs.readFileSync(path.join(root, '.memgit', 'stores.json'), 'utf8')) as { stores: Record<string, { key: string }> };
    expect(Object.entries(record.stores).filter(([, c]) => c.key === quota.id).map(([id]) => id).sort()).toEqual(made);
    expect(record.stores['quota-9'].key).toBe(everything.id);
    expect(fs.statSync(path.join(root, '.memgit', 'stores.json')).mode & 0o777).toBe(0o600);
  });

  it('requests that are refused create no store, nor does anything over MCP but an accepted tool call', async () => {
    const bash = await postToolCall(server.url, 'acme-new1', acme.key, { tool_use: { type: 'tool_use', id: 'toolu_x', name: 'bash', input: {} }, session: 's' });
    expect(bash.status).toBe(400);
    const get = await fetch(`${server.url}/stores/acme-new2/mcp`, { headers: { ...bearer(acme.key), accept: 'text/event-stream' }, signal: LIMIT.signal() });
    expect(get.status).toBe(400);
    const list = await mcpPost(server.url, 'acme-new3', acme.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(list.status).toBe(400);
    const garbage = await mcpPost(server.url, 'acme-new4', acme.key, '{"jsonrpc": ');
    expect(garbage.status).toBe(400);
    // A batch holding an initialize opens a session at most; like any initialize, it creates nothing.
    await (await mcpPost(server.url, 'acme-new5', acme.key, [INITIALIZE])).text();
    for (const id of ['acme-new1', 'acme-new2', 'acme-new3', 'acme-new4', 'acme-new5']) expect(fs.existsSync(path.join(root, id))).toBe(false);
    // A session on a store that does not exist yet: initialize, the tool list, the resource list (empty)
    // and another tool's call write nothing; the first accepted memory tool call (a view) creates the store.
    const client = await mcpClient('acme-new6', acme.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['memory']);
    expect((await client.listResources()).resources).toEqual([]);
    await expect(client.callTool({ name: 'bash', arguments: { command: 'ls' } })).rejects.toThrow(/Unknown tool/);
    expect(fs.existsSync(path.join(root, 'acme-new6'))).toBe(false);
    const view = (await client.callTool({ name: 'memory', arguments: { command: 'view', path: '/memories' } })) as CallToolResult;
    expect(view.isError).toBeFalsy();
    await client.close();
    expect(fs.existsSync(path.join(root, 'acme-new6', '.git'))).toBe(true);
    const record = JSON.parse(fs.readFileSync(path.join(root, '.memgit', 'stores.json'), 'utf8')) as { stores: Record<string, { key: string }> };
    expect(record.stores['acme-new6'].key).toBe(acme.id);
  });

  it('a key that reaches its bound of stores while its MCP session waits: the first tool call is refused, naming the limit, nothing written', async () => {
    const dir = makeTempDir('memgit-tenants-mcpquota-');
    const key = await makeKey(dir, 'm-*', 'write');
    const own = await spawnServer(dir, ['--max-stores-per-key', '1']);
    try {
      const waiting = new Client({ name: 'tenant-test', version: '1.0.0' });
      await waiting.connect(new StreamableHTTPClientTransport(new URL(`${own.url}/stores/m-2/mcp`), { requestInit: { headers: bearer(key.key) } }));
      expect((await postToolCall(own.url, 'm-1', key.key, { tool_use: toolUse('toolu_m1', create('a.md')), session: 's' })).status).toBe(200);
      const refused = (await waiting.callTool({ name: 'memory', arguments: create('b.md') })) as CallToolResult;
      await waiting.close();
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^Error: the memory store does not exist, and this key may not create it: .*--max-stores-per-key 1.*Nothing was written\.$/);
      expect(fs.existsSync(path.join(dir, 'm-2'))).toBe(false);
      expectNoUnexpected(own);
    } finally {
      await own.stop();
      removeDir(dir);
    }
  });

  it('a store at --max-store-bytes takes no more writes (507 naming the limit, nothing written); reads still work', async () => {
    // Random text does not compress: the blob and the working-tree file each take about its size.
    const big = Buffer.from(Array.from({ length: 300 * 1024 }, (_, i) => (i * 7919 + ((i * i) % 251)) % 256)).toString('base64').slice(0, 300 * 1024);
    expect((await call('acme-big', everything, 'toolu_big1', create('big.md', big))).status).toBe(200);
    // Far from the bound a measured size is trusted for a second; afterwards the store is measured again.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const before = gitReport(path.join(root, 'acme-big')).commits.length;
    const refused = await call('acme-big', everything, 'toolu_big2', create('more.md'));
    expect(refused.status).toBe(507);
    expect(errorOf(refused.text)).toEqual({ type: 'quota_exceeded_error', message: expect.stringContaining('--max-store-bytes'), code: 'store_full' });
    const view = await call('acme-big', everything, 'toolu_big3', { command: 'view', path: '/memories' });
    expect(view.status).toBe(200);
    const client = await mcpClient('acme-big', everything.key);
    const overMcp = (await client.callTool({ name: 'memory', arguments: create('mcp.md') })) as CallToolResult;
    await client.close();
    expect(overMcp.isError).toBe(true);
    expect(textOf(overMcp)).toMatch(/^Error: this memory store is full .*Nothing was written/);
    expect(gitReport(path.join(root, 'acme-big')).commits.length).toBe(before);
  });

  it('creating a store over MCP counts against the key\'s rate limit', async () => {
    const dir = makeTempDir('memgit-tenants-rate-');
    const key = await makeKey(dir, 'r-*', 'write');
    const limited = await spawnServer(dir, ['--rate-limit', '3']);
    try {
      // Every message counts: initialize (1) and the tool call that creates r-1 (2); initialize on r-2 (3);
      // the tool call that would create r-2 is the fourth request of the minute: 429, and no store.
      const statuses = [];
      for (const id of ['r-1', 'r-2']) {
        const init = await mcpPost(limited.url, id, key.key, INITIALIZE);
        await init.text();
        statuses.push(init.status);
        const session = init.headers.get('mcp-session-id')!;
        const tool = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory', arguments: { command: 'view', path: '/memories' } } };
        const called = await mcpPost(limited.url, id, key.key, tool, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' });
        await called.text();
        statuses.push(called.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(fs.existsSync(path.join(dir, 'r-1', '.git'))).toBe(true);
      expect(fs.existsSync(path.join(dir, 'r-2'))).toBe(false);
      expectNoUnexpected(limited);
    } finally {
      await limited.stop();
      removeDir(dir);
    }
  });
});

describe('8. the disk', () => {
  const cli = (args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  const serveOnce = (dir: string) => cli(['server', '--root', dir, '--port', '0']);

  it('the root is created owner-only', async () => {
    const dir = path.join(makeTempDir('memgit-tenants-new-'), 'fresh-root');
    const own = await spawnServer(dir);
    try {
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    } finally {
      await own.stop();
      removeDir(path.dirname(dir));
    }
  });

  it.each([
    ['the root', '', 0o777, /the server root .* is writable by every user \(mode 0777\)/],
    ['.memgit', '.memgit', 0o770, /the key folder .* is writable by its group \(mode 0770\)/],
    ['keys.json', '.memgit/keys.json', 0o666, /the key file .* is writable by every user \(mode 0666\)/],
  ])('refuses to start when %s is writable by group or others', async (_what, file, mode, message) => {
    const dir = makeTempDir('memgit-tenants-open-');
    try {
      await makeKey(dir, 'a-*', 'write');
      fs.chmodSync(path.join(dir, file), mode);
      const run = serveOnce(dir);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toMatch(/chmod go-w/);
    } finally {
      removeDir(dir);
    }
  });

  it('a store whose .git is a link to another store is not a store: nothing of the other store is read or written', async () => {
    expect((await call('beta-1', everything, 'toolu_b1', create('secret.md', 'beta only\n'))).status).toBe(200);
    const before = gitReport(path.join(root, 'beta-1')).commits.length;
    fs.mkdirSync(path.join(root, 'acme-evil'));
    fs.symlinkSync('../beta-1/.git', path.join(root, 'acme-evil', '.git'));
    const view = await call('acme-evil', acme, 'toolu_e1', { command: 'view', path: '/memories/secret.md' });
    expect(view.status).toBe(409);
    expect(view.text).not.toContain('beta only');
    const write = await call('acme-evil', acme, 'toolu_e2', create('x.md'));
    expect(write.status).toBe(409);
    const read = await fetch(`${server.url}/api/v1/stores/acme-evil/commits`, { headers: bearer(reader.key), signal: LIMIT.signal() });
    expect(read.status).toBe(404);
    const page = await fetch(`${server.url}/stores/acme-evil/files/secret.md`, { headers: basicAuth(reader.key), signal: LIMIT.signal() });
    expect(page.status).toBe(404);
    expect(await page.text()).not.toContain('beta only');
    const listed = (await (await fetch(`${server.url}/api/v1/stores`, { headers: bearer(acme.key), signal: LIMIT.signal() })).json()) as { stores: string[] };
    expect(listed.stores).not.toContain('acme-evil');
    expect(gitReport(path.join(root, 'beta-1')).commits.length).toBe(before);
  });

  it('a key file made writable by others while the server runs: no key is accepted any more', async () => {
    const dir = makeTempDir('memgit-tenants-keys-');
    const key = await makeKey(dir, 'k-*', 'write');
    const own = await spawnServer(dir);
    try {
      expect((await postToolCall(own.url, 'k-1', key.key, { tool_use: toolUse('toolu_k1', { command: 'view', path: '/memories' }), session: 's' })).status).toBe(200);
      fs.chmodSync(path.join(dir, '.memgit', 'keys.json'), 0o666);
      const refused = await postToolCall(own.url, 'k-1', key.key, { tool_use: toolUse('toolu_k2', { command: 'view', path: '/memories' }), session: 's' });
      expect(refused.status).toBe(500);
      expect(await own.stdoutMatching(/writable by every user/)).toMatch(/writable by every user/);
      fs.chmodSync(path.join(dir, '.memgit', 'keys.json'), 0o600);
      expect((await postToolCall(own.url, 'k-1', key.key, { tool_use: toolUse('toolu_k3', { command: 'view', path: '/memories' }), session: 's' })).status).toBe(200);
      expectNoUnexpected(own);
    } finally {
      await own.stop();
      removeDir(dir);
    }
  });
});

describe('9. headers', () => {
  it('no-store on every answer to an authenticated request, nosniff on every answer', async () => {
    const answers = [
      await fetch(`${server.url}/healthz`),
      await fetch(`${server.url}/`),
      await fetch(`${server.url}/api/v1/stores/acme-1/tool-calls`, { method: 'POST' }),
    ];
    for (const answer of answers) expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    const authenticated = [
      (await call('acme-1', acme, 'toolu_h9', { command: 'view', path: '/memories' })).headers,
      (await fetch(`${server.url}/`, { headers: basicAuth(reader.key) })).headers,
      (await fetch(`${server.url}/static/app.css`, { headers: basicAuth(reader.key) })).headers,
      (await fetch(`${server.url}/stores/acme-1/commits`, { headers: basicAuth(reader.key) })).headers,
      (await fetch(`${server.url}/stores/acme-1/static/app.css`, { headers: basicAuth(reader.key) })).headers,
      (await fetch(`${server.url}/api/v1/stores/acme-1/commits`, { headers: bearer(reader.key) })).headers,
      (await fetch(`${server.url}/api/v1/stores`, { headers: bearer(reader.key) })).headers,
      (await call('acme-1', { key: 'mgk_0000000000000000_' + 'A'.repeat(43), id: '' }, 'toolu_h9b', {})).headers,
      (await mcpPost(server.url, 'acme-1', acme.key, INITIALIZE)).headers,
    ];
    for (const headers of authenticated) {
      expect(headers.get('cache-control')).toBe('no-store');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

describe('10. every write names its key; sessions belong to their key', () => {
  it('commits over HTTP and MCP carry Memory-Key, which no client can set; the UI and the records show it', async () => {
    const session = 'sess_ten10';
    const answer = await call('acme-10', acme, 'toolu_k10', create('k.md'), session);
    const commit = (JSON.parse(answer.text) as { commit: string }).commit;
    // A client that names itself with a line break cannot add a trailer of its own.
    const client = await mcpClient('acme-10', acme2.key, 'evil\nMemory-Key: forged');
    const viaMcp = (await client.callTool({ name: 'memory', arguments: create('m.md') })) as CallToolResult;
    await client.close();
    expect([textOf(viaMcp), viaMcp.isError]).toEqual(['File created successfully at: /memories/m.md', undefined]);
    const report = gitReport(path.join(root, 'acme-10'));
    expect(report.commits.at(-2)!.trailers).toContain(`Memory-Key: ${acme.id}`);
    const trailers = report.commits.at(-1)!.trailers.split('\n');
    expect(trailers.filter((t) => t.startsWith('Memory-Key:'))).toEqual([`Memory-Key: ${acme2.id}`]);
    const rows = ((await (await fetch(`${server.url}/api/v1/stores/acme-10/commits`, { headers: bearer(reader.key) })).json()) as { rows: Array<{ commit: string; key: string | null }> }).rows;
    expect(rows.map((r) => r.key)).toEqual([acme2.id, acme.id, null]);
    const page = await (await fetch(`${server.url}/stores/acme-10/commits/${commit}`, { headers: basicAuth(reader.key) })).text();
    expect(page).toMatch(new RegExp(`<dt>Key</dt><dd class="commit-key"><code class="id"[^>]*>${acme.id}</code>`));
    const calls = ((await (await fetch(`${server.url}/api/v1/stores/acme-10/sessions/${session}`, { headers: bearer(reader.key) })).json()) as { allCalls: Array<{ key: string | null }> }).allCalls;
    expect(calls.map((c) => c.key)).toEqual([acme.id]);
  });

  it('another key cannot write into (or read under) a session a key began: 409, nothing written', async () => {
    const session = 'sess_owned';
    expect((await call('acme-1', acme, 'toolu_own1', create('own.md'), session)).status).toBe(200);
    const before = gitReport(path.join(root, 'acme-1')).commits.length;
    const borrowed = await call('acme-1', acme2, 'toolu_own2', create('borrowed.md'), session);
    expect(borrowed.status).toBe(409);
    expect(errorOf(borrowed.text)).toEqual({ type: 'conflict_error', message: expect.stringContaining('was begun by another key'), code: 'session_key_conflict' });
    const peek = await call('acme-1', acme2, 'toolu_own3', { command: 'view', path: '/memories' }, session);
    expect(peek.status).toBe(409);
    expect(gitReport(path.join(root, 'acme-1')).commits.length).toBe(before);
    expect((await call('acme-1', acme2, 'toolu_own4', create('mine.md'), 'sess_owned_2')).status).toBe(200);
    expect((await call('acme-1', acme, 'toolu_own5', create('own2.md'), session)).status).toBe(200);
  });
});

describe('12. store ids and credentials', () => {
  it('the store segment of read-API and UI URLs is decoded once', async () => {
    expect((await call('acme-1', acme, 'toolu_dec', { command: 'view', path: '/memories' })).status).toBe(200);
    // %2531 decoded twice would be `1`: the store acme-1.
    const api = await fetch(`${server.url}/api/v1/stores/acme-%2531/commits`, { headers: bearer(reader.key) });
    expect(api.status).toBe(400);
    const ui = await fetch(`${server.url}/stores/acme-%2531/commits`, { headers: basicAuth(reader.key) });
    expect(ui.status).toBe(400);
    expect((await fetch(`${server.url}/api/v1/stores/acme-%31/commits`, { headers: bearer(reader.key) })).status).toBe(200);
  });

  it('a new store id may not equal another store\'s but for case, nor end with a dot', async () => {
    expect((await call('acme-1', acme, 'toolu_cas', { command: 'view', path: '/memories' })).status).toBe(200);
    const upper = await call('ACME-1', everything, 'toolu_case', create('c.md'));
    expect(upper.status).toBe(409);
    expect(errorOf(upper.text).message).toMatch(/differ only in case/);
    const dotted = await call('acme-dot.', everything, 'toolu_dot', create('d.md'));
    expect(dotted.status).toBe(400);
    expect(errorOf(dotted.text).message).toMatch(/end with a dot/);
    expect(fs.existsSync(path.join(root, 'ACME-1'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'acme-dot.'))).toBe(false);
  });

  it('Basic auth takes the key as the password only, never as the user name', async () => {
    const asUser = await fetch(`${server.url}/`, { headers: basicAuth('', reader.key) });
    expect(asUser.status).toBe(401);
    const alone = await fetch(`${server.url}/`, { headers: { authorization: `Basic ${Buffer.from(reader.key).toString('base64')}` } });
    expect(alone.status).toBe(401);
    expect((await fetch(`${server.url}/`, { headers: basicAuth(reader.key) })).status).toBe(200);
  });
});
