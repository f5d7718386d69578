/**
 * "Start a dream" in the audit UI (issue 28): GET /dreams/new and POST /dreams behind the operator login,
 * CSRF and origin checks, the SDK's client made from the environment as `memgit dream` makes it (here
 * pointed at the scripted Messages API on 127.0.0.1). Without a key the form says so and nothing starts;
 * bad input and a dream already running are refused on the form; a started dream lands on its page, which
 * links to its review, whose page links back. Real HTTP through supertest, a real store checked with git.
 */
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { csrfFrom, formClient } from '../support/operator-forms';
import type { Express } from 'express';
import { ScriptedServer } from '../../src/agent/scripted-server';
import { createApp } from '../../src/web/app';
import { operatorRoutes } from '../../src/web/routes/operator';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';

const TOKEN = 'dream-start-operator-token-0123456789';
const HOST = '127.0.0.1:3000';
const ORIGIN = `http://${HOST}`;

let dir: string;
let store: MemoryStore;
let app: Express;
let scripted: ScriptedServer;
const savedEnv = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL, token: process.env.ANTHROPIC_AUTH_TOKEN };

const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name, input });

beforeAll(async () => {
  dir = makeTempDir('memgit-dream-start-');
  store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  await store.execute({ type: 'tool_use', id: 'toolu_a1', name: 'memory', input: { command: 'create', path: '/memories/prefs.md', file_text: '- Editor: vim\n' } }, { session: 'sess_a' });
  await store.execute({ type: 'tool_use', id: 'toolu_b1', name: 'memory', input: { command: 'create', path: '/memories/prefs-2.md', file_text: '- Editor: emacs now\n' } }, { session: 'sess_b' });
  scripted = await ScriptedServer.start([
    { content: [toolUse('toolu_d1', 'memory', { command: 'str_replace', path: '/memories/prefs.md', old_str: '- Editor: vim', new_str: '- Editor: emacs (per session sess_b)' })] },
    { content: [{ type: 'text', text: 'Merged the editor notes.' }] },
  ]);
  app = createApp({ store, log: () => undefined, routes: [operatorRoutes({ token: TOKEN })] });
});

afterEach(() => {
  for (const [name, value] of [['ANTHROPIC_API_KEY', savedEnv.key], ['ANTHROPIC_BASE_URL', savedEnv.url], ['ANTHROPIC_AUTH_TOKEN', savedEnv.token]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

afterAll(async () => {
  await scripted?.close();
  await store?.close();
  if (dir) removeDir(dir);
});

function git(...args: string[]): string {
  const run = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim();
}

async function loggedIn() {
  const { get, post } = formClient(app);
  const page = await get('/login');
  const res = await post('/login').send({ operator: 'alice', token: TOKEN, _csrf: csrfFrom(page.text), next: '/dreams/new' });
  expect(res.status).toBe(303);
  const form = await get('/dreams/new');
  expect(form.status).toBe(200);
  return { get, post, csrf: csrfFrom(form.text), form: form.text };
}

function withKey(): void {
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test-not-a-real-key';
  process.env.ANTHROPIC_BASE_URL = scripted.url;
}

test('the form is behind the operator login; a POST needs the login and the CSRF token; nothing starts without them', async () => {
  withKey();
  const anonymous = await request(app).get('/dreams/new').set('Host', HOST);
  expect(anonymous.status).toBe(303);
  expect(anonymous.headers.location).toBe('/login?next=%2Fdreams%2Fnew');
  const list = await request(app).get('/dreams').set('Host', HOST);
  expect(list.text).toContain('href="/dreams/new"');
  // The navigation links to /dreams on every page.
  expect((await request(app).get('/').set('Host', HOST)).text).toMatch(/<nav class="nav"[^]*<a href="\/dreams" >Dreams<\/a>[^]*<\/nav>/);
  expect((await request(app).get('/api/dreams/new').set('Host', HOST)).status).toBe(404);

  const noLogin = await request(app).post('/dreams').set('Host', HOST).set('Origin', ORIGIN).type('form').send({ sessions: 'sess_a' });
  expect(noLogin.status).toBe(401);
  const b = await loggedIn();
  expect(b.form).toContain('Start a dream');
  expect(b.form).toContain('name="sessions"');
  expect(b.form).toContain('name="instructions"');
  expect((await b.post('/dreams').send({ sessions: 'sess_a' })).status).toBe(403);
  expect((await b.post('/dreams').send({ sessions: 'sess_a', _csrf: 'forged' })).status).toBe(403);
  // Another site's form is refused before anything else.
  const crossSite = await b.post('/dreams').set('Origin', 'http://evil.example').set('Sec-Fetch-Site', 'cross-site').send({ sessions: 'sess_a', _csrf: b.csrf });
  expect(crossSite.status).toBe(403);
  expect(store.dreams()).toEqual([]);
  expect(scripted.messageRequests).toHaveLength(0);
});

test('without an API key the form answers with a clear error and nothing is started', async () => {
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.ANTHROPIC_AUTH_TOKEN;
  const b = await loggedIn();
  // The form says so up front.
  expect(b.form).toContain('No API key');
  const refused = await b.post('/dreams').send({ sessions: 'sess_a', instructions: 'keep it short', _csrf: b.csrf });
  expect(refused.status).toBe(503);
  expect(refused.text).toContain('No API key: the process serving this UI has no ANTHROPIC_API_KEY in its environment');
  expect(refused.text).toContain('Nothing was started.');
  // What was typed is kept in the form.
  expect(refused.text).toContain('value="sess_a"');
  expect(refused.text).toContain('>keep it short</textarea>');
  expect(store.dreams()).toEqual([]);
  expect(git('for-each-ref', 'refs/heads/dream/')).toBe('');
  expect(scripted.messageRequests).toHaveLength(0);
});

test('bad input is refused on the form and starts nothing', async () => {
  withKey();
  const b = await loggedIn();
  const unknown = await b.post('/dreams').send({ sessions: 'sess_a, sess_nope', _csrf: b.csrf });
  expect(unknown.status).toBe(400);
  expect(unknown.text).toContain('no session &quot;sess_nope&quot; in this store; nothing was started');
  const long = await b.post('/dreams').send({ sessions: '', instructions: 'x'.repeat(4097), _csrf: b.csrf });
  expect(long.status).toBe(400);
  expect(long.text).toContain('instructions are 4097 characters; at most 4096');
  const hostile = await b.post('/dreams').send({ sessions: '<script>alert(1)</script>', _csrf: b.csrf });
  expect(hostile.status).toBe(400);
  expect(hostile.text).not.toContain('<script>alert(1)</script>');
  expect(store.dreams()).toEqual([]);
  expect(scripted.messageRequests).toHaveLength(0);
});

test('a dream started from the form runs, lands on its page, links to its review, whose page links back; a second while one is live is refused', async () => {
  withKey();
  const b = await loggedIn();
  const mainBefore = git('rev-parse', 'refs/heads/main');
  const started = await b.post('/dreams').send({ sessions: 'sess_a sess_b', instructions: '<b>Prefer</b> the newest editor.', _csrf: b.csrf });
  expect(started.status).toBe(303);
  const id = /^\/dreams\/(drm_[0-9a-f]{24})$/.exec(String(started.headers.location))![1];
  let dream = store.dream(id);
  for (let tries = 0; dream.status !== 'completed' && dream.status !== 'failed' && tries < 600; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    dream = store.dream(id);
  }
  expect(dream.error).toBeNull();
  expect(dream.status).toBe('completed');
  expect(dream.inputs).toEqual([{ type: 'sessions', session_ids: ['sess_a', 'sess_b'] }]);
  expect(dream.instructions).toBe('<b>Prefer</b> the newest editor.');
  // The SDK talked to the scripted API named by ANTHROPIC_BASE_URL, with the key of the environment.
  expect(scripted.messageRequests).toHaveLength(2);
  expect(JSON.stringify(scripted.messageRequests[0].headers)).toContain('sk-ant-test-not-a-real-key');
  expect(JSON.stringify(scripted.messageRequests[0].body!.messages)).toContain('<b>Prefer</b> the newest editor.');
  // Main untouched; the call on the dream's branch.
  expect(git('rev-parse', 'refs/heads/main')).toBe(mainBefore);
  expect(git('log', '-1', '--format=%s', `refs/heads/dream/${id}`)).toBe('toolu_d1');

  const reviewId = dream.outputs[0].review_id;
  const page = await b.get(`/dreams/${id}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`href="/reviews/${reviewId}"`);
  expect(page.text).toContain('&lt;b&gt;Prefer&lt;/b&gt; the newest editor.');
  expect((await b.get('/dreams')).text).toContain(`href="/reviews/${reviewId}"`);
  const review = await b.get(`/reviews/${reviewId}`);
  expect(review.status).toBe(200);
  expect(review.text).toContain(`href="/dreams/${id}"`);

  // One live dream at a time: the form names it and links to it; nothing else starts.
  const live = await store.beginDream({ inputs: [{ type: 'sessions', session_ids: ['sess_a'] }], model: 'claude-test-model' });
  const second = await b.post('/dreams').send({ sessions: 'sess_b', _csrf: b.csrf });
  expect(second.status).toBe(409);
  expect(second.text).toContain(`dream ${live.id} is running on this store (one at a time); nothing was started`);
  expect(second.text).toContain(`href="/dreams/${live.id}"`);
  await store.finishDream(live.id, 'canceled');
  expect(store.dreams().map((d) => d.id)).toEqual([live.id, id]);
});
