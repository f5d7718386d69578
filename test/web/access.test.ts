import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/web/app';
import { estimateTokenBits, LOGIN_FAILURES_ALLOWED, OperatorAuth, tokenProblem } from '../../src/web/auth';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { accessPolicy, isLoopbackHost } from '../../src/web/security';
import type { MemoryStore } from '../../src/store/memory-store';
import { call, create, dispose, newStore } from '../rollback/helpers';

/** Who may read, failed-login limits, and the small header and URL findings of the red-team pass. */

const TOKEN = 'access-test-operator-token-77';
const HOST = '127.0.0.1:3000';
const ORIGIN = `http://${HOST}`;

let store: MemoryStore;

beforeAll(async () => {
  store = await newStore();
  await call(store, 'toolu_01', create('/memories/secret.md', 'the vault code is 4711\n'));
});

afterAll(async () => dispose(store));

function app(options: { readsNeedLogin?: boolean; publicUrl?: string } = {}): Express {
  return createApp({ store, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })], ...options });
}

function csrfFrom(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1];
}

async function login(a: Express, token = TOKEN) {
  const agent = request.agent(a);
  const page = await agent.get('/login').set('Host', HOST);
  const res = await agent
    .post('/login')
    .set('Host', HOST)
    .set('Origin', ORIGIN)
    .set('Sec-Fetch-Site', 'same-origin')
    .type('form')
    .send({ operator: 'alice', token, _csrf: csrfFrom(page.text), next: '/' });
  return { agent, res };
}

describe('reading off loopback', () => {
  it('decides from the bound host: loopback reads freely, anything else needs the login', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'memgit.example.com']) expect([host, isLoopbackHost(host)]).toEqual([host, false]);
    expect(accessPolicy({ host: '0.0.0.0' })).toEqual({ readsNeedLogin: true, https: false });
    expect(accessPolicy({ host: '127.0.0.1', publicUrl: 'https://memgit.example.com/' })).toEqual({ readsNeedLogin: false, https: true });
  });

  it('refuses every page and JSON twin without the login, whatever the Host header says', async () => {
    const a = app({ readsNeedLogin: true });
    for (const host of [HOST, 'localhost']) {
      const page = await request(a).get('/files/secret.md').set('Host', host);
      expect(page.status).toBe(303);
      expect(page.headers.location).toBe(`/login?next=${encodeURIComponent('/files/secret.md')}`);
      expect(page.text).not.toContain('4711');
      for (const url of ['/api', '/api/files/secret.md', '/api/search?q=vault', '/raw/secret.md']) {
        const res = await request(a).get(url).set('Host', host);
        expect([url, res.status]).toEqual([url, url.startsWith('/api') ? 401 : 303]);
        expect(res.text).not.toContain('4711');
      }
    }
    expect((await request(a).get('/login').set('Host', HOST)).status).toBe(200);
    expect((await request(a).get('/static/app.css').set('Host', HOST)).status).toBe(200);
  });

  it('reads after the login, or with the operator token as Bearer', async () => {
    const a = app({ readsNeedLogin: true });
    const { agent, res } = await login(a);
    expect(res.status).toBe(303);
    const page = await agent.get('/files/secret.md').set('Host', HOST);
    expect(page.status).toBe(200);
    expect(page.text).toContain('4711');
    const api = await request(a).get('/api/files/secret.md').set('Host', HOST).set('Authorization', `Bearer ${TOKEN}`);
    expect(api.status).toBe(200);
    expect((await request(a).get('/api').set('Host', HOST).set('Authorization', 'Bearer wrong-token')).status).toBe(401);
  });

  it('on loopback, pages need no login but rollback previews (HTML and JSON) do', async () => {
    const a = app();
    expect((await request(a).get('/files/secret.md').set('Host', HOST)).status).toBe(200);
    expect((await request(a).get('/rollback/revert?ref=toolu_01').set('Host', HOST)).status).toBe(303);
    const api = await request(a).get('/api/rollback/revert?ref=toolu_01').set('Host', HOST);
    expect(api.status).toBe(401);
    expect(api.text).not.toContain('4711');
    const withToken = await request(a).get('/api/rollback/revert?ref=toolu_01').set('Host', HOST).set('Authorization', `Bearer ${TOKEN}`);
    expect(withToken.status).toBe(200);
    expect(withToken.body.status).toBe('preview');
  });
});

describe('cookies and HSTS follow the public URL', () => {
  it('plain HTTP: no Secure cookies, no HSTS', async () => {
    const a = app();
    const { res } = await login(a);
    expect(String(res.headers['set-cookie'])).not.toMatch(/Secure/);
    expect((await request(a).get('/').set('Host', HOST)).headers['strict-transport-security']).toBeUndefined();
  });

  it('an https:// public URL: Secure cookies and HSTS', async () => {
    const a = app({ publicUrl: 'https://memgit.example.com' });
    const page = await request(a).get('/login').set('Host', HOST);
    expect(String(page.headers['set-cookie'])).toMatch(/memgit_csrf=[^,]*; Secure/);
    expect(page.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
  });
});

describe('failed logins are limited per client', () => {
  it(`the login form: ${LOGIN_FAILURES_ALLOWED} wrong tokens, then 429 even for the right one`, async () => {
    const a = app();
    for (let k = 0; k < LOGIN_FAILURES_ALLOWED; k++) expect((await login(a, `wrong-token-${k}-xxxxxxxxxxxxxxxx`)).res.status).toBe(401);
    const blocked = await login(a, `wrong-token-again-xxxxxxxxxxxxxxxx`);
    expect(blocked.res.status).toBe(429);
    expect(Number(blocked.res.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.res.text).toContain('Too many failed logins');
    expect((await login(a)).res.status).toBe(429);
  });

  it('Bearer tokens count too; a success in between does not wipe the count', async () => {
    const a = app();
    const bearer = (token: string) => request(a).post('/api/rollback/revert').set('Host', HOST).set('Authorization', `Bearer ${token}`).send({ ref: 'toolu_01', dryRun: true });
    for (let k = 0; k < LOGIN_FAILURES_ALLOWED - 1; k++) expect((await bearer('nope-nope-nope-nope')).status).toBe(401);
    expect((await bearer(TOKEN)).status).toBe(200);
    expect((await bearer('nope-nope-nope-nope')).status).toBe(401); // the limit-th failure
    expect((await bearer('nope-nope-nope-nope')).status).toBe(429);
    const blocked = await bearer(TOKEN);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toMatch(/too many failed logins/);
  });

  it('a memgit key sent as the Bearer token is wrong but never counted as a guess (issue 25)', async () => {
    const a = app();
    const bearer = (token: string) => request(a).post('/api/rollback/revert').set('Host', HOST).set('Authorization', `Bearer ${token}`).send({ ref: 'toolu_01', dryRun: true });
    for (let k = 0; k < LOGIN_FAILURES_ALLOWED + 2; k++) expect((await bearer(`mgk_${'0'.repeat(15)}${k % 10}_${'A'.repeat(43)}`)).status).toBe(401);
    expect((await bearer(TOKEN)).status).toBe(200);
  });

  it('with failureKey, one identity\'s failures lock out only itself; a request the server vouches for is never locked out', async () => {
    const who = (req: import('express').Request) => (req.headers['x-test-vouched'] ? null : `id:${String(req.headers['x-test-who'])}`);
    const a = createApp({ store, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN, failureKey: who })] });
    const bearer = (token: string, headers: Record<string, string>) => {
      const r = request(a).post('/api/rollback/revert').set('Host', HOST).set('Authorization', `Bearer ${token}`);
      for (const [k, v] of Object.entries(headers)) r.set(k, v);
      return r.send({ ref: 'toolu_01', dryRun: true });
    };
    for (let k = 0; k < LOGIN_FAILURES_ALLOWED; k++) expect((await bearer('nope-nope-nope-nope', { 'x-test-who': 'mallory' })).status).toBe(401);
    expect((await bearer(TOKEN, { 'x-test-who': 'mallory' })).status).toBe(429);
    expect((await bearer(TOKEN, { 'x-test-who': 'alice' })).status).toBe(200);
    for (let k = 0; k < LOGIN_FAILURES_ALLOWED + 2; k++) expect((await bearer('nope-nope-nope-nope', { 'x-test-vouched': '1' })).status).toBe(401);
    expect((await bearer(TOKEN, { 'x-test-vouched': '1' })).status).toBe(200);
  });
});

describe('operator tokens need real entropy', () => {
  it.each(['aaaaaaaaaaaaaaaa', 'abababababababababababab', '0123456789abcdef', 'short'])('refuses %j', (token) => {
    expect(tokenProblem(token)).not.toBeNull();
    expect(() => new OperatorAuth(token)).toThrow(/operator token/);
  });

  it('accepts generated and random tokens', () => {
    expect(tokenProblem(TOKEN)).toBeNull();
    expect(estimateTokenBits('fff182f8b3ac88797d0c2d66123b98c7')).toBeGreaterThanOrEqual(128); // openssl rand -hex 16
    expect(estimateTokenBits('RGB50jItPspKtus-UcRpaVyCtBsPfFjT')).toBeGreaterThanOrEqual(128);
  });
});

describe('small findings', () => {
  it('login, rollback pages and their JSON twins are never cached', async () => {
    const a = app();
    for (const url of ['/login', '/rollback/revert?ref=toolu_01', '/api/rollback/revert?ref=toolu_01']) {
      const res = await request(a).get(url).set('Host', HOST);
      expect([url, res.headers['cache-control']]).toEqual([url, 'no-store']);
    }
  });

  it('malformed percent-encoding is a 400, not a 500', async () => {
    const a = app();
    for (const url of ['/files/%', '/files/%E0%A4%A', '/commits/%zz', '/sessions/%']) {
      const res = await request(a).get(url).set('Host', HOST);
      expect([url, res.status]).toEqual([url, 400]);
      expect(res.text).toContain('malformed percent-encoding');
    }
    const api = await request(a).get('/api/files/%').set('Host', HOST);
    expect(api.status).toBe(400);
    expect(api.body).toEqual({ error: 'malformed percent-encoding in the URL', status: 400, code: 'bad_request' });
  });
});
