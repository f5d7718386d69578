/**
 * The file page's history follows renames, and so does its "restore…" link: a revision from before a
 * rename is restored to the file's current name (its content then, under its former name, comes back as
 * the current file), as `memgit restore` does — never re-created under the old name beside it. Followed
 * as an operator would (login, confirmation page, POST), checked with the real git CLI.
 */
import request from 'supertest';
import { createApp } from '../../src/web/app';
import { rollbackRoutes } from '../../src/web/routes/operator';
import type { MemoryStore } from '../../src/store/memory-store';
import { call, create, dispose, git, newStore, rename, replace } from '../rollback/helpers';

const TOKEN = 'test-operator-token-0123456789';
const HOST = '127.0.0.1:3000';

let store: MemoryStore;
afterAll(async () => dispose(store));

function decode(href: string): string {
  return href.replace(/&amp;/g, '&');
}

test('restore from a row before the rename restores the content then to the current name', async () => {
  store = await newStore();
  await call(store, 'toolu_create', create('/memories/a.md', 'first draft\n'), 'sess_r');
  const edit = await call(store, 'toolu_edit', replace('/memories/a.md', 'first draft', 'second draft'), 'sess_r');
  await call(store, 'toolu_rename', rename('/memories/a.md', '/memories/b.md'), 'sess_r');
  await call(store, 'toolu_after', replace('/memories/b.md', 'second draft', 'third draft'), 'sess_r');
  await call(store, 'toolu_rename2', rename('/memories/b.md', '/memories/notes/c.md'), 'sess_r');
  const app = createApp({ store, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  const agent = request.agent(app);
  const get = (url: string) => agent.get(url).set('Host', HOST);
  const post = (url: string) => agent.post(url).set('Host', HOST).set('Origin', `http://${HOST}`).set('Sec-Fetch-Site', 'same-origin').type('form');
  const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];

  // The JSON twin names where a restore goes: the current name, also from a page pinned before the renames.
  expect((await get('/api/files/notes/c.md')).body.restorePath).toBe('/memories/notes/c.md');
  expect((await get(`/api/files/a.md?at=${edit}`)).body.restorePath).toBe('/memories/notes/c.md');

  const page = await get('/files/notes/c.md');
  expect(page.status).toBe(200);
  const row = page.text.split('<tr>').find((r) => r.includes('href="/calls/toolu_edit"'))!;
  // The row is from before the renames: it names the file as it was then (in segments that may wrap).
  expect(/<span class="path">(.*?)<\/span><\/td>/.exec(row)![1].replace(/<[^>]+>/g, '')).toBe('/memories/a.md');
  const href = decode(/<a href="(\/rollback\/restore\?[^"]+)"[^>]*>restore…<\/a>/.exec(row)![1]);
  const params = new URL(href, 'http://x').searchParams;
  expect(params.get('path')).toBe('/memories/notes/c.md');
  expect(params.get('at')).toBe(`commit:${edit}`);

  const login = await get('/login');
  expect((await post('/login').send({ operator: 'alice', token: TOKEN, _csrf: csrf(login.text), next: href })).status).toBe(303);
  const confirm = await get(href);
  expect(confirm.status).toBe(200);
  expect(confirm.text).toContain('restore /memories/notes/c.md at toolu_edit (then /memories/a.md)');
  const form = confirm.text.slice(confirm.text.indexOf('<form class="op-form"'));
  const fields: Record<string, string> = {};
  for (const m of form.slice(0, form.indexOf('</form>')).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]] = decode(m[2]);
  expect(fields).toMatchObject({ path: '/memories/notes/c.md', at: `commit:${edit}` });
  const done = await post('/rollback/restore').send({ ...fields, reason: 'back to the second draft' });
  expect(done.status).toBe(303);

  // git: the current file holds the content from before the renames; no a.md or b.md came back.
  expect(git(store.dir, 'show', 'HEAD:memories/notes/c.md')).toBe('second draft');
  expect(git(store.dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'memories/')).toBe('memories/notes/c.md');
  expect(git(store.dir, 'log', '-1', '--format=%s')).toBe('restore /memories/notes/c.md at toolu_edit (then /memories/a.md)');
  expect(git(store.dir, 'status', '--porcelain')).toBe('');
});
