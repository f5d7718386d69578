import request from 'supertest';
import { csrfFrom, formClient } from '../support/operator-forms';
import type { Express } from 'express';
import { createApp } from '../../src/web/app';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { MemoryStore } from '../../src/store/memory-store';
import { call, create, dispose, git, newStore, replace } from '../rollback/helpers';

/**
 * A store memgit may not write (a read-only clone, `memgit.readonly` in its config, as `memgit clone`
 * sets it): the audit UI offers no rollback or redaction and says why, and a state-changing request
 * answers 409 with the read-only message, not 500.
 */

const TOKEN = 'read-only-operator-token-0123456789';
const HOST = '127.0.0.1:3000';
const ORIGIN = `http://${HOST}`;
const READ_ONLY = /read-only clone for auditing; it takes no writes/;

let store: MemoryStore;
let app: Express;
let commit: string;

beforeAll(async () => {
  const source = await newStore();
  await call(source, 'toolu_ro_1', create('/memories/facts.md', 'one\ntwo\n'), 'sess_ro');
  commit = await call(source, 'toolu_ro_2', replace('/memories/facts.md', 'two', 'two: call 555-0100'), 'sess_ro');
  const dir = source.dir;
  await source.close();
  git(dir, 'config', 'memgit.readonly', 'true');
  store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  expect(store.readOnly).toBe(true);
  app = createApp({ store, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
});

afterAll(async () => dispose(store));

async function loggedIn() {
  const { get, post } = formClient(app);
  const page = await get('/login');
  const res = await post('/login').send({ operator: 'alice', token: TOKEN, _csrf: csrfFrom(page.text), next: '/' });
  expect(res.status).toBe(303);
  return { get, post, csrf: csrfFrom((await get('/login')).text) };
}

test('no page offers Revert, Restore, Reset, Roll back or Redact, and the pages say why', async () => {
  const pages = ['/', `/commits/${commit}`, '/sessions/sess_ro', `/files/facts.md?at=${commit.slice(0, 12)}`, '/files/facts.md', '/redactions', '/commits?flagged=1'];
  for (const url of pages) {
    const res = await request(app).get(url).set('Host', HOST);
    expect([url, res.status]).toEqual([url, 200]);
    expect([url, res.text]).not.toEqual([url, expect.stringMatching(/href="\/(rollback\/|redact[?"])/)]);
    expect([url, res.text]).not.toEqual([url, expect.stringMatching(/Revert this|Restore this|Reset memory|Roll back|Redact (what|something)/)]);
  }
  for (const url of [`/commits/${commit}`, '/sessions/sess_ro', `/files/facts.md?at=${commit.slice(0, 12)}`, '/redactions']) {
    const res = await request(app).get(url).set('Host', HOST);
    expect([url, res.text]).toEqual([url, expect.stringContaining('This store is a read-only clone: rollbacks and redaction are not offered here')]);
  }
});

test('a direct request answers 409 with the read-only message (HTML and JSON), and nothing changes', async () => {
  const head = git(store.dir, 'rev-parse', 'HEAD');
  const bearer = (url: string) => request(app).post(url).set('Host', HOST).set('Authorization', `Bearer ${TOKEN}`);
  for (const [kind, body] of [
    ['revert', { ref: 'toolu_ro_2' }],
    ['restore', { path: '/memories/facts.md', at: 'toolu_ro_1' }],
    ['reset', { to: 'toolu_ro_1' }],
    ['session', { session: 'sess_ro' }],
  ] as const) {
    const api = await bearer(`/api/rollback/${kind}`).send({ ...body, reason: 'try' });
    expect([kind, api.status, api.body.error]).toEqual([kind, 409, expect.stringMatching(READ_ONLY)]);
    const dry = await bearer(`/api/rollback/${kind}`).send({ ...body, dryRun: true });
    expect([kind, dry.status]).toEqual([kind, 409]);
  }
  const b = await loggedIn();
  const page = await b.post('/rollback/revert').send({ ref: 'toolu_ro_2', _csrf: b.csrf });
  expect(page.status).toBe(409);
  expect(page.text).toMatch(READ_ONLY);
  const confirm = await b.get('/rollback/revert?ref=toolu_ro_2');
  expect(confirm.status).toBe(409);
  expect(confirm.text).toMatch(READ_ONLY);
  for (const url of ['/redact/preview', '/redact']) {
    const res = await b.post(url).send({ kind: 'text', text: '555-0100', reason: 'x', _csrf: b.csrf });
    expect([url, res.status]).toEqual([url, 409]);
    expect(res.text).toMatch(READ_ONLY);
  }
  expect((await b.get('/redact?call=toolu_ro_2')).status).toBe(409);
  // Starting a dream: not offered, and refused (409) with nothing started.
  expect((await request(app).get('/dreams').set('Host', HOST)).text).not.toContain('href="/dreams/new"');
  expect((await b.get('/dreams/new')).status).toBe(409);
  const dream = await b.post('/dreams').send({ sessions: 'sess_ro', _csrf: b.csrf });
  expect(dream.status).toBe(409);
  expect(dream.text).toMatch(READ_ONLY);
  expect(store.dreams()).toEqual([]);
  expect(git(store.dir, 'rev-parse', 'HEAD')).toBe(head);
});
