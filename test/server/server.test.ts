/**
 * `memgit server` spawned from dist/, driven over HTTP: the tool API answers exactly what store.execute
 * answers, keys and store patterns isolate stores, hostile store ids never leave the root, bad requests
 * get clear JSON errors without stacks, and SIGTERM loses nothing acknowledged. Commits are checked with
 * the git CLI.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { expectRepository, gitReport, makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { expectNoUnexpected, keysCli, makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';

const base = makeTempDir('memgit-server-');
const root = path.join(base, 'root');
let server: SpawnedServer;
let acme: { key: string; id: string };
let beta: { key: string; id: string };
let reader: { key: string; id: string };
let operator: { key: string; id: string };

beforeAll(async () => {
  await ensureBuilt();
  fs.mkdirSync(root, { mode: 0o700 }); // a server root must be its user's alone (whatever the umask)
  acme = await makeKey(root, 'acme-*', 'write');
  beta = await makeKey(root, 'beta-*', 'write');
  reader = await makeKey(root, 'acme-*', 'read');
  operator = await makeKey(root, 'acme-*', 'operator');
  server = await spawnServer(root, ['--body-limit', '256kb', '--max-open-stores', '2']);
}, 240_000);

afterEach(() => expectNoUnexpected(server));

afterAll(async () => {
  await server?.stop();
  removeDir(base);
});

const call = (store: string, key: string | null, id: string, input: Record<string, unknown>, session = 'sess_http') =>
  postToolCall(server.url, store, key, { tool_use: toolUse(id, input), session });

const parsed = (text: string) => JSON.parse(text) as { tool_result: Record<string, unknown>; commit: string | null };

describe('keys', () => {
  it('prints a key once and keeps only its hash, in a 0600 file', () => {
    const run = keysCli(['create', '--root', root, '--stores', 'gamma-1', '--scope', 'read']);
    expect(run.status).toBe(0);
    const key = run.stdout.trim();
    expect(key).toMatch(/^mgk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const file = path.join(root, '.memgit', 'keys.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain(key.split('_').slice(2).join('_'));
    const listed = keysCli(['list', '--root', root, '--json']);
    expect(listed.stdout).not.toContain(key.split('_').slice(2).join('_'));
    const infos = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(infos.map((i) => i.stores)).toContainEqual(['gamma-1']);
    expect(infos.every((i) => !('hash' in i))).toBe(true);
  });

  it('refuses a bad pattern or scope with one clear line', () => {
    const bad = keysCli(['create', '--root', root, '--stores', '../x', '--scope', 'write']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^memgit: invalid store pattern "..\/x"/);
    const scope = keysCli(['create', '--root', root, '--stores', 'x', '--scope', 'admin']);
    expect(scope.status).not.toBe(0);
    expect(scope.stderr).toMatch(/admin/);
  });
});

describe('the memory tool over HTTP', () => {
  it('answers byte for byte what store.execute answers, one commit per write, idempotent retries', async () => {
    const reference = await MemoryStore.open(path.join(base, 'reference'), QUIET);
    const calls: Array<[string, Record<string, unknown>]> = [
      ['toolu_h01', { command: 'view', path: '/memories' }],
      ['toolu_h02', { command: 'create', path: '/memories/notes/prefs.md', file_text: 'tabs\nüñí — \u202e\n' }],
      ['toolu_h03', { command: 'str_replace', path: '/memories/notes/prefs.md', old_str: 'nope', new_str: 'x' }],
      ['toolu_h04', { command: 'insert', path: '/memories/notes/prefs.md', insert_line: 1, insert_text: 'width 4' }],
      ['toolu_h05', { command: 'view', path: '/memories/notes/prefs.md' }],
      ['toolu_h06', { command: 'create', path: '/memories/../etc/passwd', file_text: 'x' }],
      ['toolu_h07', { command: 'rename', old_path: '/memories/notes', new_path: '/memories/customer' }],
      ['toolu_h08', { command: 'delete', path: '/memories/customer/prefs.md' }],
      ['toolu_h09', { command: 'frobnicate' }],
    ];
    try {
      for (const [id, input] of calls) {
        const answer = await call('acme-1', acme.key, id, input);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        const expected = await reference.execute(toolUse(id, input), { session: 'sess_http' });
        expect(JSON.stringify(parsed(answer.text).tool_result)).toBe(JSON.stringify(expected));
      }
      // A retry of an applied call: the same answer, the same commit, nothing new.
      const first = await call('acme-1', acme.key, 'toolu_h02', calls[1][1]);
      const again = await call('acme-1', acme.key, 'toolu_h02', calls[1][1]);
      expect(again.text).toBe(first.text);
      expect(parsed(again.text).commit).toMatch(/^[0-9a-f]{40}$/);
      const reused = await call('acme-1', acme.key, 'toolu_h02', { command: 'create', path: '/memories/other.md', file_text: 'x' });
      expect(parsed(reused.text).tool_result).toEqual({
        type: 'tool_result',
        tool_use_id: 'toolu_h02',
        content: 'Error: tool_use id toolu_h02 was already used by an earlier create call with different input',
        is_error: true,
      });
      // An invalid session id is the library's error result, not an HTTP error.
      const badSession = await call('acme-1', acme.key, 'toolu_h10', { command: 'view', path: '/memories' }, 'bad session');
      expect(parsed(badSession.text).tool_result).toEqual(await reference.execute(toolUse('toolu_h10', { command: 'view', path: '/memories' }), { session: 'bad session' }));
    } finally {
      await reference.close();
    }
    const session = 'sess_http';
    // Every commit names the key that made it (Memory-Key), from the key the server checked.
    const key = acme.id;
    expectRepository(gitReport(path.join(root, 'acme-1')), [
      { id: 'toolu_h02', command: 'create', path: '/memories/notes/prefs.md', session, key },
      { id: 'toolu_h04', command: 'insert', path: '/memories/notes/prefs.md', session, key },
      { id: 'toolu_h07', command: 'rename', path: '/memories/notes', newPath: '/memories/customer', session, key },
      { id: 'toolu_h08', command: 'delete', path: '/memories/customer/prefs.md', session, key },
    ]);
  });

  it('answers a commit id that the git CLI finds', async () => {
    const answer = parsed((await call('acme-2', acme.key, 'toolu_c1', { command: 'create', path: '/memories/a.md', file_text: 'a' })).text);
    const log = gitReport(path.join(root, 'acme-2'));
    expect(log.commits.at(-1)!.oid).toBe(answer.commit);
  });
});

describe('requests that are refused', () => {
  const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |node_modules|\.js:\d+/);

  it('no key, a wrong key, a malformed header: 401 and nothing created', async () => {
    const input = { command: 'create', path: '/memories/x.md', file_text: 'x' };
    const none = await call('acme-9', null, 'toolu_n1', input);
    const wrong = await call('acme-9', `mgk_${acme.id}_${'A'.repeat(43)}`, 'toolu_n2', input);
    const unknown = await call('acme-9', `mgk_${'0'.repeat(16)}_${'A'.repeat(43)}`, 'toolu_n3', input);
    const garbage = await postToolCall(server.url, 'acme-9', null, { tool_use: toolUse('toolu_n4', input), session: 's' }, { authorization: 'Basic Zm9vOmJhcg==' });
    for (const answer of [none, wrong, unknown, garbage]) {
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toEqual({ error: { type: 'authentication_error', message: expect.any(String), code: 'unauthorized' } });
      noStack(answer.text);
    }
    expect(fs.existsSync(path.join(root, 'acme-9'))).toBe(false);
  });

  it('a revoked key is refused from the next request on', async () => {
    const key = await makeKey(root, 'acme-*', 'write');
    expect((await call('acme-r', key.key, 'toolu_r1', { command: 'view', path: '/memories' })).status).toBe(200);
    expect(keysCli(['revoke', key.id, '--root', root]).status).toBe(0);
    const after = await call('acme-r', key.key, 'toolu_r2', { command: 'create', path: '/memories/x.md', file_text: 'x' });
    expect(after.status).toBe(401);
    expect(gitReport(path.join(root, 'acme-r')).commits).toHaveLength(1);
  });

  it("a store the key does not match answers exactly like one that does not exist", async () => {
    expect((await call('beta-1', beta.key, 'toolu_b1', { command: 'create', path: '/memories/b.md', file_text: 'secret' })).status).toBe(200);
    const before = gitReport(path.join(root, 'beta-1')).commits.length;
    const input = { command: 'view', path: '/memories/b.md' };
    const existing = await call('beta-1', acme.key, 'toolu_b2', input);
    const missing = await call('beta-2', acme.key, 'toolu_b2', input);
    expect(existing.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(existing.text.replace('beta-1', 'X')).toBe(missing.text.replace('beta-2', 'X'));
    const readExisting = await fetch(`${server.url}/api/v1/stores/beta-1/commits`, { headers: { authorization: `Bearer ${reader.key}` } });
    const readMissing = await fetch(`${server.url}/api/v1/stores/beta-2/commits`, { headers: { authorization: `Bearer ${reader.key}` } });
    expect([readExisting.status, readMissing.status]).toEqual([404, 404]);
    expect((await readExisting.text()).replace('beta-1', 'X')).toBe((await readMissing.text()).replace('beta-2', 'X'));
    expect(fs.existsSync(path.join(root, 'beta-2'))).toBe(false);
    expect(gitReport(path.join(root, 'beta-1')).commits).toHaveLength(before);
    // The acme key's listing does not show beta stores.
    const listing = await (await fetch(`${server.url}/api/v1/stores`, { headers: { authorization: `Bearer ${acme.key}` } })).json();
    expect((listing as { stores: string[] }).stores.filter((s) => s.startsWith('beta'))).toEqual([]);
  });

  it('scopes: read keys cannot write, write keys cannot roll back, operator keys can', async () => {
    const write = await call('acme-1', reader.key, 'toolu_s1', { command: 'create', path: '/memories/r.md', file_text: 'x' });
    expect(write.status).toBe(403);
    expect(JSON.parse(write.text).error.type).toBe('permission_error');
    const revert = (key: string) =>
      fetch(`${server.url}/api/v1/stores/acme-2/rollback/revert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ref: 'toolu_c1', reason: 'test' }),
      });
    expect((await revert(acme.key)).status).toBe(403);
    const done = await revert(operator.key);
    expect(done.status).toBe(201);
    const outcome = (await done.json()) as { commit: string; actor: string };
    expect(outcome.actor).toBe(`operator:key:${operator.id}`);
    expect(gitReport(path.join(root, 'acme-2')).commits.at(-1)!.oid).toBe(outcome.commit);
    const commits = await fetch(`${server.url}/api/v1/stores/acme-2/commits`, { headers: { authorization: `Bearer ${reader.key}` } });
    expect(commits.status).toBe(200);
    const rows = ((await commits.json()) as { rows: Array<{ commit: string }> }).rows;
    expect(rows[0].commit).toBe(outcome.commit);
  });

  it('store ids that try to leave the root are refused and nothing is written outside it', async () => {
    const everything = await makeKey(root, '*', 'write');
    const before = fs.readdirSync(base).sort();
    const rootBefore = fs.readdirSync(root).sort();
    const body = JSON.stringify({ tool_use: toolUse('toolu_e1', { command: 'create', path: '/memories/x.md', file_text: 'x' }), session: 's' });
    const raw = (urlPath: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        // Options, not a URL string: a URL would normalise `..` away before it is sent.
        const { hostname, port } = new URL(server.url);
        const request = http.request({
          hostname,
          port,
          path: urlPath,
          method: 'POST',
          headers: { authorization: `Bearer ${everything.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        });
        request.on('response', (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (c: string) => (text += c));
          response.on('end', () => resolve({ status: response.statusCode!, text }));
        });
        request.on('error', reject);
        request.end(body);
      });
    const hostile = ['..', '.', '%2e%2e', '%2E%2E', '...', '.hidden', 'a%2Fb', 'a/b', '%2Fetc%2Fpasswd', '%2e%2e%2Froot', 'a%00b', '%00', 'a%5Cb', `${'a'.repeat(129)}`, 'x'.repeat(5000), '%E2%80%AEevil', '-lead', '_lead', '%ZZ'];
    for (const id of hostile) {
      const answer = await raw(`/api/v1/stores/${id}/tool-calls`);
      expect([400, 404]).toContain(answer.status);
      noStack(answer.text);
      expect(() => JSON.parse(answer.text)).not.toThrow();
    }
    expect((await raw('/api/v1/stores/..%2F..%2Ftmp/tool-calls')).status).toBe(400);
    expect((await raw('/api/v1/stores/../tool-calls')).status).toBe(400);
    expect((await raw('/api/v1/stores/%2e%2e/tool-calls')).status).toBe(400);
    expect(fs.readdirSync(base).sort()).toEqual(before);
    expect(fs.readdirSync(root).sort()).toEqual(rootBefore);
  });

  it('bodies: JSON only (415), bad JSON and bad shapes (400), a body limit (413)', async () => {
    const text = await postToolCall(server.url, 'acme-1', acme.key, 'tool_use=x', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const badJson = await postToolCall(server.url, 'acme-1', acme.key, '{"tool_use": ');
    expect(badJson.status).toBe(400);
    expect(JSON.parse(badJson.text).error.message).toBe('the body is not valid JSON');
    const notMemory = await postToolCall(server.url, 'acme-1', acme.key, { tool_use: { type: 'tool_use', id: 'toolu_x', name: 'bash', input: {} }, session: 's' });
    expect(notMemory.status).toBe(400);
    expect(JSON.parse(notMemory.text).error.message).toBe('expected the memory tool (name "memory"), got "bash"');
    const noSession = await postToolCall(server.url, 'acme-1', acme.key, { tool_use: toolUse('toolu_x', { command: 'view', path: '/memories' }) });
    expect(noSession.status).toBe(400);
    const extra = await postToolCall(server.url, 'acme-1', acme.key, { tool_use: toolUse('toolu_x', {}), session: 's', sneaky: 1 });
    expect(extra.status).toBe(400);
    const array = await postToolCall(server.url, 'acme-1', acme.key, '[1,2]');
    expect(array.status).toBe(400);
    const big = await call('acme-1', acme.key, 'toolu_big', { command: 'create', path: '/memories/big.md', file_text: 'x'.repeat(300 * 1024) });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text).error.type).toBe('request_too_large');
    for (const answer of [text, badJson, notMemory, noSession, extra, array, big]) noStack(answer.text);
    expect(gitReport(path.join(root, 'acme-1')).commits.map((c) => c.message)).not.toContain('toolu_big\n');
  });
});

describe('a folder of the root that is not a store', () => {
  it('is refused (409) and left untouched', async () => {
    const junk = path.join(root, 'acme-junk');
    fs.mkdirSync(junk);
    fs.writeFileSync(path.join(junk, 'notes.txt'), 'mine');
    const answer = await call('acme-junk', acme.key, 'toolu_j1', { command: 'create', path: '/memories/x.md', file_text: 'x' });
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.text).error.type).toBe('conflict_error');
    expect(fs.readdirSync(junk)).toEqual(['notes.txt']);
  });
});

describe('a read-only clone under the root', () => {
  it('refuses a write with 409 and the read-only message (was 500, "may or may not have been applied"); reads work', async () => {
    const dir = path.join(root, 'acme-ro');
    const store = await MemoryStore.open(dir, QUIET);
    await store.execute(toolUse('toolu_ro1', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_ro' });
    await store.close();
    // What `memgit clone` sets in the clone's config.
    expect(spawnSync('git', ['-C', dir, 'config', 'memgit.readonly', 'true']).status).toBe(0);
    const head = gitReport(dir).commits.length;
    const refused = await call('acme-ro', acme.key, 'toolu_ro2', { command: 'create', path: '/memories/b.md', file_text: 'b\n' });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.text)).toEqual({
      error: { type: 'conflict_error', message: expect.stringMatching(/^this store is a read-only clone for auditing; it takes no writes .*; nothing was changed$/), code: 'read_only_store' },
    });
    const read = await call('acme-ro', acme.key, 'toolu_ro3', { command: 'view', path: '/memories/a.md' });
    expect(read.status).toBe(200);
    expect(parsed(read.text).tool_result.content).toContain('     1\ta');
    expect(gitReport(dir).commits.length).toBe(head);
    expect(server.stdout()).not.toMatch(/ReadOnlyStoreError/);
  });
});

describe('operations', () => {
  it('healthz, and one log line per request with request id, store, key id, status and time — never the key', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({
      status: 'ok',
      openStores: expect.any(Number),
      // No store here has a replica; the totals name no store and no remote.
      replication: { replicas: 0, lagging: 0, stopped: 0, maxLagCommits: 0, oldestUnpushedAgeSeconds: 0 },
    });
    const answer = await call('acme-1', acme.key, 'toolu_log', { command: 'view', path: '/memories' });
    const requestId = answer.headers.get('x-request-id');
    await new Promise((r) => setTimeout(r, 100)); // let the log line reach our pipe
    const line = server.logLines().find((l) => l.req_id === requestId);
    expect(line).toEqual(expect.objectContaining({ method: 'POST', store: 'acme-1', key_id: acme.id, status: 200, ms: expect.any(Number) }));
    for (const key of [acme, beta, reader, operator]) expect(server.stdout()).not.toContain(key.key.split('_').slice(2).join('_'));
  });

  it('the audit UI: Basic auth with a key, only its stores, each store under /stores/{id}/', async () => {
    const anonymous = await fetch(`${server.url}/`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(anonymous.headers.get('content-type')).toMatch(/^application\/json/);
    // A browser that cancels the Basic-auth prompt shows the 401's body: a page saying what to do, not JSON.
    const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    for (const url of ['/', '/stores/acme-1/', '/stores/acme-1/commits']) {
      const cancelled = await fetch(`${server.url}${url}`, { headers: { accept: BROWSER_ACCEPT } });
      expect([url, cancelled.status]).toEqual([url, 401]);
      expect(cancelled.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(cancelled.headers.get('content-type')).toMatch(/^text\/html/);
      expect(cancelled.headers.get('content-security-policy')).toContain("default-src 'none'");
      const body = await cancelled.text();
      expect(body).toContain('<h1>A key is needed</h1>');
      expect(body).toContain('<code>memgit keys create</code>');
      expect(body).not.toMatch(/<script|<style|\sstyle=|"error":/);
    }
    // API clients keep JSON whatever they accept.
    const api = await fetch(`${server.url}/api/v1/stores/acme-1/commits`, { headers: { accept: BROWSER_ACCEPT } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    const auth = { authorization: `Basic ${Buffer.from(`me:${reader.key}`).toString('base64')}` };
    const list = await (await fetch(`${server.url}/`, { headers: auth })).text();
    expect(list).toContain('href="/stores/acme-1/"');
    expect(list).not.toContain('beta-1');
    const page = await fetch(`${server.url}/stores/acme-1/commits`, { headers: auth });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('href="/stores/acme-1/commits/');
    // The page names its store (title and header) and links back to the list of stores, which is the only
    // link outside the store's pages.
    expect(html).toContain('<title>Commits · acme-1 · memgit</title>');
    expect(html).toMatch(/<p class="store-crumb"><a data-server-link href="\/">Stores<\/a> <span class="sep">\/<\/span> <a class="store-id" href="\/stores\/acme-1\/"[^>]*>acme-1<\/a><\/p>/);
    expect(html.replace(' data-server-link href="/"', '')).not.toMatch(/(href|src|action)="\/(?!stores\/acme-1\/)/);
    // A file URL with the path as shown (/memories/…) redirects to the file, within the store.
    const shown = await fetch(`${server.url}/stores/acme-1/files/memories/notes/prefs.md`, { headers: auth, redirect: 'manual' });
    expect([shown.status, shown.headers.get('location')]).toEqual([302, '/stores/acme-1/files/notes/prefs.md']);
    const overview = await (await fetch(`${server.url}/stores/acme-1/`, { headers: auth })).text();
    expect(overview).toContain('<title>Overview · acme-1 · memgit</title>');
    const missing = await fetch(`${server.url}/stores/acme-1/files/no-such-file.md`, { headers: auth });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toMatch(/<title>Not found · acme-1 · memgit<\/title>[\s\S]*class="store-crumb"/);
    expect((await fetch(`${server.url}/stores/beta-1/commits`, { headers: auth })).status).toBe(404);
    const foreign = await fetch(`${server.url}/stores/beta-1/commits`, { headers: { ...auth, accept: BROWSER_ACCEPT } });
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toMatch(/<h1>Not found<\/h1>\s*<p>no store &quot;beta-1&quot;<\/p>/);
    // The Host check of the UI stays on (fetch cannot set Host: node:http can).
    const { hostname, port } = new URL(server.url);
    const rebound = await new Promise<number>((resolve, reject) => {
      http.get({ hostname, port, path: '/stores/acme-1/commits', headers: { ...auth, host: 'evil.example' } }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      }).on('error', reject);
    });
    expect(rebound).toBe(421);
  });
});

describe('rollback in the UI of one store', () => {
  it('operator login, CSRF and the confirmation page work under /stores/{id}/', async () => {
    const token = /operator token for rollbacks .*: (\S+)/.exec(server.stderr())![1];
    const basic = `Basic ${Buffer.from(`me:${reader.key}`).toString('base64')}`;
    const jar = new Map<string, string>();
    const request = async (urlPath: string, init: { method?: string; form?: Record<string, string> } = {}) => {
      const response = await fetch(`${server.url}${urlPath}`, {
        method: init.method ?? 'GET',
        redirect: 'manual',
        headers: {
          authorization: basic,
          origin: server.url,
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: init.form ? new URLSearchParams(init.form).toString() : undefined,
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return { status: response.status, location: response.headers.get('location'), text: await response.text() };
    };
    const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const target = '/rollback/revert?ref=toolu_h08';
    const login = await request(`/stores/acme-1/login?next=${encodeURIComponent(target)}`);
    expect(login.status).toBe(200);
    expect(login.text).toContain('action="/stores/acme-1/login"');
    // The token was printed by `memgit server`, not `memgit serve`.
    expect(login.text).toContain('the operator token that <code>memgit server</code> printed');
    expect(login.text).toContain('<title>Operator login · acme-1 · memgit</title>');
    const loggedIn = await request('/stores/acme-1/login', { method: 'POST', form: { _csrf: csrfOf(login.text), next: target, operator: 'ci', token } });
    expect(loggedIn.status).toBe(303);
    expect(loggedIn.location).toBe(`/stores/acme-1${target}`);
    const confirm = await request(loggedIn.location!);
    expect(confirm.status).toBe(200);
    const action = /<form class="op-form" method="post" action="([^"]+)"/.exec(confirm.text)![1];
    expect(action.startsWith('/stores/acme-1/rollback/revert')).toBe(true);
    const hidden = Object.fromEntries([...confirm.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&amp;/g, '&')]));
    const done = await request(action.replace(/&amp;/g, '&'), { method: 'POST', form: { ...hidden, reason: 'ui test' } });
    expect(done.status).toBe(303);
    const commit = /^\/stores\/acme-1\/commits\/([0-9a-f]{40})$/.exec(done.location!)![1];
    const report = gitReport(path.join(root, 'acme-1'));
    expect(report.commits.at(-1)!.oid).toBe(commit);
    expect(report.commits.at(-1)!.trailers).toContain('Memory-Actor: operator:ci');
  });
});

describe('a server of its own', () => {
  it('limits requests per key (429 with Retry-After)', async () => {
    const dir = makeTempDir('memgit-server-rate-');
    const key = await makeKey(dir, 'r-*', 'write');
    const limited = await spawnServer(dir, ['--rate-limit', '3']);
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await postToolCall(limited.url, 'r-1', key.key, { tool_use: toolUse(`toolu_rl${i}`, { command: 'view', path: '/memories' }), session: 's' })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      expect(await limited.stop()).toBe(0);
      removeDir(dir);
    }
  });

  it('a full store queue answers 503 with Retry-After; every 200 is committed', async () => {
    const dir = makeTempDir('memgit-server-queue-');
    const key = await makeKey(dir, 'q-*', 'write');
    const own = await spawnServer(dir, ['--max-queue', '1']);
    try {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => postToolCall(own.url, 'q-1', key.key, { tool_use: toolUse(`toolu_q${i}`, { command: 'create', path: `/memories/q${i}.md`, file_text: 'q' }), session: 's' })),
      );
      for (const answer of answers) {
        expect([200, 503]).toContain(answer.status);
        if (answer.status === 503) {
          expect(answer.headers.get('retry-after')).toBe('1');
          expect(JSON.parse(answer.text).error.type).toBe('overloaded_error');
        }
      }
      const committed = answers.filter((a) => a.status === 200).map((a) => parsed(a.text).commit);
      expect(gitReport(path.join(dir, 'q-1')).commits.slice(1).map((c) => c.oid).sort()).toEqual([...committed].sort());
    } finally {
      expect(await own.stop()).toBe(0);
      removeDir(dir);
    }
  }, 60_000);

  it('SIGTERM finishes the calls in flight: every acknowledged call is in history, fsck is clean', async () => {
    const dir = makeTempDir('memgit-server-term-');
    const key = await makeKey(dir, 't-*', 'write');
    const own = await spawnServer(dir);
    const answers = Array.from({ length: 40 }, (_, i) =>
      postToolCall(own.url, `t-${i % 4}`, key.key, { tool_use: toolUse(`toolu_t${i}`, { command: 'create', path: `/memories/f${i}.md`, file_text: `${i}\n` }), session: 's' }).catch(
        () => null,
      ),
    );
    await new Promise((r) => setTimeout(r, 50));
    process.kill(own.pid, 'SIGTERM');
    const settled = await Promise.all(answers);
    expect(await own.exited).toBe(0);
    const acknowledged = settled.filter((a) => a?.status === 200).map((a) => parsed(a!.text));
    for (const answer of acknowledged) {
      const store = `t-${Number(String(answer.tool_result.tool_use_id).slice(7)) % 4}`;
      const report = gitReport(path.join(dir, store));
      expect(report.fsckCode).toBe(0);
      expect(report.commits.map((c) => c.oid)).toContain(answer.commit);
    }
    for (const answer of settled) if (answer && answer.status !== 200) expect(answer.status).toBe(503);
    removeDir(dir);
  }, 60_000);
});
