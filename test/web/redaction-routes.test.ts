/**
 * The redaction action and pages over HTTP: login, CSRF and origin checks, no-store, the secret kept out
 * of URLs, pages and logs, the preview bound to one login, flag badges and the "flagged only" filter, the
 * audit log pages and old commit ids resolving with a notice. Checked with the real git CLI.
 */
import request from 'supertest';
import { csrfFrom, formClient } from '../support/operator-forms';
import type { Express } from 'express';
import { createApp } from '../../src/web/app';
import { PendingRedactions } from '../../src/web/services/redaction';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { call, create, git, insert, replace } from '../rollback/helpers';

const TOKEN = 'redaction-test-operator-token-5150';
const HOST = '127.0.0.1:3000';
const ORIGIN = `http://${HOST}`;
/** Shaped like an Anthropic API key, so secretlint's recommended rules flag it. */
const SECRET = `sk-ant-api03-Zq7XvN2pL9wR4tY8uI1oP5aS3dF6gH0jK${'A'.repeat(60)}AA`;
const SECRET_CORE = SECRET.slice(3, -2); // what a mask never shows

let store: MemoryStore;
let app: Express;
const logs: string[] = [];
let secretCommit: string;

beforeAll(async () => {
  store = await MemoryStore.open(makeTempDir('memgit-redaction-web-'), { fsync: false, log: (m) => logs.push(m) });
  await call(store, 'toolu_r01', create('/memories/profile.md', '# Acme\nplan: pro\n'), 'sess_a');
  secretCommit = await call(store, 'toolu_r02', create('/memories/setup.md', `# Setup\napi key: ${SECRET}\nregion: eu\n`), 'sess_a');
  await call(store, 'toolu_r03', replace('/memories/profile.md', 'plan: pro', 'plan: enterprise'), 'sess_b');
  await call(store, 'toolu_r04', insert('/memories/setup.md', 3, 'webhooks: on'), 'sess_b');
  await settleFlags();
  app = createApp({ store, log: (m) => logs.push(m), routes: [rollbackRoutes({ token: TOKEN })] });
});

afterAll(async () => {
  await store.close();
  removeDir(store.dir);
});

/** Wait until every commit so far has been scanned for secrets (scanning runs in the background). */
async function settleFlags(): Promise<void> {
  await store.flags.idle();
  await store.flags.catchUp(store.history);
}

const head = () => git(store.dir, 'rev-parse', 'HEAD');

function pendingFrom(html: string): string {
  const match = /name="pending" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no pending redaction in the page');
  return match[1];
}

/** A browser-like client: keeps cookies, sends the Host and (for POSTs) a same-origin Origin. */
const browser = () => formClient(app);

async function loggedIn(name = 'dana') {
  const b = browser();
  const page = await b.get('/login');
  const res = await b.post('/login').send({ operator: name, token: TOKEN, _csrf: csrfFrom(page.text), next: '/redact' });
  expect(res.status).toBe(303);
  return b;
}

/** Log in, open the form and post a preview of redacting the secret; returns the client and the preview. */
async function preview(form: Record<string, string> = { kind: 'text', text: SECRET, reason: 'leaked key' }) {
  const b = await loggedIn();
  const formPage = await b.get('/redact');
  expect(formPage.status).toBe(200);
  const res = await b.post('/redact/preview').send({ ...form, _csrf: csrfFrom(formPage.text) });
  return { b, res };
}

describe('flags: badge, filter and the link to the redaction action', () => {
  it('the commits list shows a badge on the flagged call only, linking to the action prefilled with its call', async () => {
    const res = await request(app).get('/commits').set('Host', HOST);
    expect(res.status).toBe(200);
    const badges = res.text.match(/class="badge flag"[^>]*>/g) ?? [];
    expect(badges).toHaveLength(1);
    expect(badges[0]).toContain('href="/redact?call=toolu_r02"');
    expect(badges[0]).toContain('anthropic in /memories/setup.md line 2');
    expect(res.text).not.toContain(SECRET_CORE);
  });

  it('"flagged only" lists only flagged calls, in HTML and JSON, and keeps the filter in its links', async () => {
    const page = await request(app).get('/commits?flagged=1').set('Host', HOST);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="flagged" value="1" checked');
    expect(page.text.match(/href="\/calls\/[^"]+"/g)).toEqual(['href="/calls/toolu_r02"']);
    const api = await request(app).get('/api/commits?flagged=1').set('Host', HOST);
    expect(api.status).toBe(200);
    expect(api.body.filter).toEqual({ flagged: true });
    expect(api.body.rows.map((r: { toolUseId: string }) => r.toolUseId)).toEqual(['toolu_r02']);
    expect(Object.keys(api.body.flags)).toEqual([secretCommit]);
    expect(api.body.flags[secretCommit]).toMatchObject({ toolUseId: 'toolu_r02', kinds: ['secret'], rules: ['anthropic'] });
    expect(JSON.stringify(api.body)).not.toContain(SECRET_CORE);
    const combined = await request(app).get('/api/commits?flagged=1&session=sess_b').set('Host', HOST);
    expect(combined.body.rows).toEqual([]);
    const bad = await request(app).get('/commits?flagged=maybe').set('Host', HOST);
    expect(bad.status).toBe(400);
  });

  it('the commit page and the session page show the badge; the commit page lists the masked findings', async () => {
    const commit = await request(app).get(`/commits/${secretCommit}`).set('Host', HOST);
    expect(commit.status).toBe(200);
    expect(commit.text).toContain('class="badge flag" href="/redact?call=toolu_r02"');
    expect(commit.text).toMatch(/<dt>Flagged<\/dt><dd class="flag-findings">.*\/memories\/<\/span><wbr><span class="seg">setup\.md.*line 2: <code class="masked">sk-\*+AA \(\d+ chars\)<\/code>/s);
    expect(commit.text).toContain('href="/redact?call=toolu_r02">Redact what this call wrote…</a>');
    const unflagged = await request(app).get('/calls/toolu_r03').set('Host', HOST);
    expect(unflagged.text).not.toContain('class="badge flag"');
    const session = await request(app).get('/sessions/sess_a').set('Host', HOST);
    expect(session.status).toBe(200);
    expect(session.text.match(/class="badge flag"/g)).toHaveLength(1);
    expect((await request(app).get('/api/sessions/sess_a').set('Host', HOST)).body.flags[secretCommit].rules).toEqual(['anthropic']);
    const overview = await request(app).get('/').set('Host', HOST);
    expect(overview.text).toMatch(/href="\/commits\?flagged=1"><strong>1<\/strong> flagged call</);
  });
});

describe('refusals: nothing is redacted without login, CSRF token and same origin', () => {
  it('the form needs the login (redirect); the preview and the confirmation refuse without it', async () => {
    const before = head();
    const form = await browser().get('/redact?call=toolu_r02');
    expect(form.status).toBe(303);
    expect(form.headers.location).toBe(`/login?next=${encodeURIComponent('/redact?call=toolu_r02')}`);
    const b = browser();
    const csrf = csrfFrom((await b.get('/login')).text);
    const previewed = await b.post('/redact/preview').send({ kind: 'text', text: SECRET, reason: 'x', _csrf: csrf });
    expect(previewed.status).toBe(401);
    const confirmed = await b.post('/redact').send({ pending: 'anything', _csrf: csrf });
    expect(confirmed.status).toBe(401);
    expect(previewed.text + confirmed.text).not.toContain(SECRET_CORE);
    expect(head()).toBe(before);
  });

  it('a preview or confirmation without the CSRF token, or from another origin, is refused', async () => {
    const before = head();
    const { b, res } = await preview();
    expect(res.status).toBe(200);
    const pending = pendingFrom(res.text);
    const noCsrf = await b.post('/redact/preview').send({ kind: 'text', text: SECRET, reason: 'x' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.text).toContain('CSRF');
    const confirmNoCsrf = await b.post('/redact').send({ pending });
    expect(confirmNoCsrf.status).toBe(403);
    const foreign = await b.agent.post('/redact').type('form').set('Host', HOST).set('Origin', 'http://evil.example').send({ pending, _csrf: csrfFrom(res.text) });
    expect(foreign.status).toBe(403);
    const crossSite = await b.agent.post('/redact').type('form').set('Host', HOST).set('Sec-Fetch-Site', 'cross-site').send({ pending, _csrf: csrfFrom(res.text) });
    expect(crossSite.status).toBe(403);
    expect(head()).toBe(before);
    expect(git(store.dir, 'for-each-ref', 'refs/memgit')).toBe('');
  });

  it('a previewed redaction is bound to the login that previewed it', async () => {
    const before = head();
    const { res } = await preview();
    const other = await loggedIn('mallory');
    const csrf = csrfFrom((await other.get('/redact')).text);
    const stolen = await other.post('/redact').send({ pending: pendingFrom(res.text), _csrf: csrf });
    expect(stolen.status).toBe(400);
    expect(stolen.text).toContain('Preview the redaction again');
    expect(head()).toBe(before);
  });

  it('the login, form and preview pages are never cached', async () => {
    const { b, res } = await preview();
    expect(res.headers['cache-control']).toBe('no-store');
    for (const url of ['/login', '/redact', '/redact?call=toolu_r02']) {
      const page = await b.get(url);
      expect([url, page.status, page.headers['cache-control']]).toEqual([url, 200, 'no-store']);
    }
    const refused = await browser().post('/redact').send({ pending: 'x' });
    expect(refused.headers['cache-control']).toBe('no-store');
  });
});

describe('the secret stays out of URLs, pages and logs', () => {
  it('the form is prefilled with a call, never with a text or regex from the URL', async () => {
    const b = await loggedIn();
    const byCall = await b.get('/redact?call=toolu_r02');
    expect(byCall.text).toMatch(/<input type="radio" name="kind" value="call" checked>/);
    expect(byCall.text).toContain('name="call" maxlength="256" spellcheck="false" aria-label="tool_use id of the call" value="toolu_r02"');
    const byText = await b.get(`/redact?kind=text&text=${encodeURIComponent(SECRET)}&regex=${encodeURIComponent(SECRET)}`);
    expect(byText.status).toBe(200);
    expect(byText.text).not.toContain(SECRET_CORE);
    expect(byText.text).toMatch(/<form class="op-form redact-form" method="post" action="\/redact\/preview"/);
  });

  it('the preview lists every commit and line it will change, the match replaced by the marker, and writes nothing', async () => {
    const before = head();
    const { res } = await preview();
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(SECRET_CORE);
    const items = [...res.text.matchAll(/<li class="redact-item">.*?href="\/calls\/([^"]+)".*?<\/li>/gs)].map((m) => m[1]);
    expect(items).toEqual(['toolu_r02', 'toolu_r04']);
    expect(res.text).toMatch(/<td class="ln">2<\/td>\s*<td class="tx">api key: <mark class="marker">\[redacted \d{4}-\d{2}-\d{2} #r1\]<\/mark><\/td>\s*<td class="erased"><code class="masked">sk-\*{12}AA \(\d+ chars\)<\/code>/);
    expect(res.text).toContain('the text <code class="masked">sk-************AA');
    expect(res.text).toMatch(/<strong>3 commits<\/strong> get new ids/);
    expect(res.text).toMatch(/<a class="cancel" href="\/redactions">Cancel<\/a>/);
    expect(head()).toBe(before);
    expect(git(store.dir, 'for-each-ref', 'refs/memgit')).toBe('');
  });

  it('a refused preview shows the form again without the text or regex, and with the reason', async () => {
    const { res } = await preview({ kind: 'regex', regex: `${SECRET}(`, reason: 'leaked key' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Invalid regular expression');
    expect(res.text).not.toContain(SECRET_CORE);
    expect(res.text).toContain('value="leaked key"');
    const noReason = await preview({ kind: 'text', text: SECRET, reason: ' ' });
    expect(noReason.res.status).toBe(400);
    expect(noReason.res.text).toContain('needs a reason');
    expect(noReason.res.text).not.toContain(SECRET_CORE);
    const nothing = await preview({ kind: 'text', text: 'not-in-this-store', reason: 'x' });
    expect(nothing.res.status).toBe(200);
    expect(nothing.res.text).toContain('Nothing in this store');
    expect(nothing.res.text).not.toContain('name="pending"');
  });

  it('a preview made stale by an agent call is shown again before anything is written', async () => {
    const { b, res } = await preview();
    await call(store, 'toolu_r05', create('/memories/later.md', 'written after the preview\n'), 'sess_b');
    const before = head();
    const stale = await b.post('/redact').send({ pending: pendingFrom(res.text), _csrf: csrfFrom(res.text) });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('The memory changed since your preview');
    expect(stale.text).toMatch(/<strong>4 commits<\/strong> get new ids/);
    expect(stale.text).not.toContain(SECRET_CORE);
    expect(head()).toBe(before);
    expect(git(store.dir, 'for-each-ref', 'refs/memgit')).toBe('');
  });
});

describe('confirming: history rewritten, the record shown, old ids resolve with a notice', () => {
  let oldSecretCommit: string;
  let oldHead: string;

  beforeAll(async () => {
    oldSecretCommit = secretCommit;
    oldHead = head();
    const { b, res } = await preview();
    const done = await b.post('/redact').send({ pending: pendingFrom(res.text), _csrf: csrfFrom(res.text) });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('/redactions/r1');
    // Used once: the same preview cannot run again.
    const again = await b.post('/redact').send({ pending: pendingFrom(res.text), _csrf: csrfFrom(res.text) });
    expect(again.status).toBe(400);
  });

  it('the secret is gone from every object git can show, tool_use ids and the number of commits stay', () => {
    expect(git(store.dir, 'log', '-p', '--all')).not.toContain(SECRET_CORE);
    expect(git(store.dir, 'cat-file', '--batch-all-objects', '--batch', '--unordered')).not.toContain(SECRET_CORE);
    expect(git(store.dir, 'log', '--format=%s', 'main').split('\n')).toEqual(['toolu_r05', 'toolu_r04', 'toolu_r03', 'toolu_r02', 'toolu_r01', 'memgit: initialise store']);
    expect(head()).not.toBe(oldHead);
    expect(git(store.dir, 'show', 'HEAD:memories/setup.md')).toMatch(/^api key: \[redacted \d{4}-\d{2}-\d{2} #r1\]$/m);
    expect(git(store.dir, 'fsck', '--no-progress')).toBe('');
  });

  it('the redactions list and the record page show who, why, when, the hash and the old -> new map', async () => {
    const list = await request(app).get('/redactions').set('Host', HOST);
    expect(list.status).toBe(200);
    expect(list.text).toMatch(/<a class="id" href="\/redactions\/r1">r1<\/a>.*<td class="name">dana<\/td>\s*<td class="text">leaked key<\/td>.*title="hmac-sha256:[0-9a-f]{64}".*<td class="num">4<\/td>/s);
    const api = await request(app).get('/api/redactions').set('Host', HOST);
    expect(api.body.redactions).toHaveLength(1);
    expect(api.body.redactions[0]).toMatchObject({ id: 'r1', operator: 'dana', reason: 'leaked key', kind: 'text', commitsRewritten: 4, oldHead });
    const record = await request(app).get('/redactions/r1').set('Host', HOST);
    expect(record.status).toBe(200);
    expect(record.text).toContain(`href="/commits/${oldSecretCommit}"`);
    const newSecretCommit = git(store.dir, 'log', '--format=%H', '--grep=^toolu_r02$', 'main');
    expect(record.text).toMatch(new RegExp(`href="/commits/${oldSecretCommit}"[^>]*>[0-9a-f]+</a></td>\\s*<td class="arrow">→</td>\\s*<td><a class="id" href="/commits/${newSecretCommit}"[^>]*>`));
    const json = await request(app).get('/api/redactions/r1').set('Host', HOST);
    expect(json.body.mapTotal).toBe(4);
    expect(json.body.map[0]).toMatchObject({ old: oldSecretCommit, new: newSecretCommit, call: { toolUseId: 'toolu_r02' } });
    expect(JSON.stringify(json.body) + record.text + list.text).not.toContain(SECRET_CORE);
    expect((await request(app).get('/redactions/r9').set('Host', HOST)).status).toBe(404);
    expect((await request(app).get('/redactions/..%2Fx').set('Host', HOST)).status).toBe(404);
  });

  it('the old commit id resolves to the rewritten commit, with a notice naming the redaction', async () => {
    const page = await request(app).get(`/commits/${oldSecretCommit}`).set('Host', HOST);
    expect(page.status).toBe(200);
    const newSecretCommit = git(store.dir, 'log', '--format=%H', '--grep=^toolu_r02$', 'main');
    expect(page.text).toContain(
      `This commit was rewritten by redaction <a href="/redactions/r1">r1</a>: the link you followed names its old id <code class="id">${oldSecretCommit}</code>; you are seeing its new id <code class="id">${newSecretCommit}</code>.`,
    );
    const api = await request(app).get(`/api/commits/${oldSecretCommit.slice(0, 12)}`).set('Host', HOST);
    expect(api.body.rewrittenFrom).toEqual({ old: oldSecretCommit.slice(0, 12), redaction: 'r1' });
    expect(api.body.commit.commit).toBe(newSecretCommit);
    const current = await request(app).get(`/api/commits/${newSecretCommit}`).set('Host', HOST);
    expect(current.body.rewrittenFrom).toBeNull();
  });

  it('the file page no longer shows the secret; the flag is gone with it; the overview links the record', async () => {
    const file = await request(app).get('/files/setup.md').set('Host', HOST);
    expect(file.status).toBe(200);
    expect(file.text).not.toContain(SECRET_CORE);
    expect(file.text).toMatch(/\[redacted \d{4}-\d{2}-\d{2} #r1\]/);
    await settleFlags();
    const flagged = await request(app).get('/api/commits?flagged=1').set('Host', HOST);
    expect(flagged.body.rows).toEqual([]);
    const overview = await request(app).get('/').set('Host', HOST);
    expect(overview.text).toContain('<a href="/redactions"><strong>1</strong> redaction</a>');
  });

  it('nothing logged holds the secret', () => {
    expect(logs.some((l) => l.includes('redaction r1 by dana'))).toBe(true);
    expect(logs.join('\n')).not.toContain(SECRET_CORE);
  });
});

describe('previews kept for confirmation', () => {
  it('are taken once, only by the login that made them, and expire after 15 minutes', () => {
    let now = 1_000_000;
    const pending = new PendingRedactions(() => now);
    const request = { kind: 'text' as const, value: SECRET, reason: 'r' };
    const a = pending.put('login-a', request, 'c0ffee');
    expect(pending.take(a, 'login-b')).toBeNull();
    expect(pending.take(a, 'login-a')).toEqual({ request, head: 'c0ffee' });
    expect(pending.take(a, 'login-a')).toBeNull();
    const b = pending.put('login-a', request, 'c0ffee');
    now += 15 * 60 * 1000;
    expect(pending.take(b, 'login-a')).toBeNull();
    expect(pending.take(undefined, 'login-a')).toBeNull();
    expect(pending.size).toBe(0);
  });
});
