import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/web/app';
import { MemoryStore } from '../../src/store/memory-store';
import { buildFixture, call, Fixture, HOSTILE_NAMES, HOSTILE_SESSION, HOSTILE_TOOL_USE, removeFixture, XSS_PAYLOADS } from './fixture';

let fixture: Fixture;
let app: Express;

beforeAll(async () => {
  fixture = await buildFixture();
  app = createApp({ store: fixture.store, log: () => undefined });
});

afterAll(async () => {
  await removeFixture(fixture);
});

const get = (url: string) => request(app).get(url).set('Host', '127.0.0.1:3000');

describe('every page and its JSON twin', () => {
  const pages = () => [
    '/',
    '/commits',
    `/commits/${fixture.ids.replace}`,
    '/sessions',
    '/sessions/sess_20261202T110000_brav',
    '/files/projects/atlas-v2.md',
    '/tree',
    '/search?q=atlas',
  ];

  it('renders each main page as HTML with a strict CSP', async () => {
    for (const url of pages()) {
      const res = await get(url);
      expect([url, res.status]).toEqual([url, 200]);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const csp = res.headers['content-security-policy'];
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      // No inline script or style of our own anywhere.
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc="\/static\/app\.js")/);
      expect(res.text).not.toMatch(/\sstyle=/);
      expect(res.text).not.toMatch(/<style/);
    }
  });

  it('serves a JSON twin of each page under /api', async () => {
    for (const url of pages()) {
      const res = await get(url === '/' ? '/api' : `/api${url}`);
      expect([url, res.status]).toEqual([url, 200]);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
    const overview = (await get('/api')).body;
    expect(overview.totals.commits).toBe(fixture.store.history.size);
    expect(overview.totals.sessions).toBe(4);
    expect(overview.files.map((f: { rel: string }) => f.rel)).toContain('projects/atlas-v2.md');
  });
});

describe('commit page', () => {
  it('resolves a tool_use id and a commit id to the same call, with trailers and neighbours', async () => {
    const byToolUse = (await get(`/api/commits/${fixture.ids.afterRename}`)).body;
    const byCommit = (await get(`/api/commits/${byToolUse.commit.commit.slice(0, 12)}`)).body;
    expect(byCommit.commit.commit).toBe(byToolUse.commit.commit);
    expect(byToolUse.commit.toolUseId).toBe(fixture.ids.afterRename);
    expect(byToolUse.message).toContain('Memory-Command: str_replace');
    expect(byToolUse.message).toContain('Memory-Session: sess_20261202T110000_brav');
    expect(byToolUse.prevInSession.toolUseId).toBe(fixture.ids.rename);
    expect(byToolUse.nextInSession.toolUseId).toBe(fixture.ids.scratch);
    expect(byToolUse.sessionStep).toBe(3);
    const [diff] = byToolUse.diffs;
    expect(diff).toMatchObject({ status: 'modified', newPath: '/memories/projects/atlas-v2.md', added: 1, removed: 1 });
    expect(diff.hunks[0].lines).toEqual(
      expect.arrayContaining([
        { kind: 'del', oldNo: 2, newNo: null, text: 'owner: Dana', cut: false },
        { kind: 'add', oldNo: null, newNo: 2, text: 'owner: Dana (since 2024)', cut: false },
      ]),
    );
    expect(diff.hunks[0].splitRows).toBeUndefined(); // presentation only, not in the JSON twin
  });

  it('renders unified by default and side by side with ?view=split, without JavaScript', async () => {
    const unified = await get(`/commits/${fixture.ids.replace}`);
    expect(unified.text).toContain('class="code unified"');
    const split = await get(`/commits/${fixture.ids.replace}?view=split`);
    expect(split.text).toContain('class="code split"');
    expect(split.text).toContain(`href="/files/projects/atlas.md?at=`);
  });

  it('shows a rename as one renamed file, and answers 404 for an unknown ref', async () => {
    const rename = (await get(`/api/commits/${fixture.ids.rename}`)).body;
    expect(rename.diffs).toHaveLength(1);
    expect(rename.diffs[0]).toMatchObject({ status: 'renamed', oldPath: '/memories/projects/atlas.md', newPath: '/memories/projects/atlas-v2.md', added: 0, removed: 0 });
    const missing = await get('/commits/toolu_does_not_exist');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('toolu_does_not_exist');
    expect((await get('/api/commits/deadbeef')).body).toEqual({ error: expect.stringContaining('deadbeef'), status: 404, code: 'not_found' });
  });
});

describe('file page: content, history following renames, blame', () => {
  it('attributes every line to the call that wrote it, across a rename', async () => {
    const page = (await get('/api/files/projects/atlas-v2.md')).body;
    expect(page.exists).toBe(true);
    const byLine = page.lines.map((l: { text: string; origin: string }) => [l.text, page.origins[l.origin].toolUseId]);
    expect(byLine).toEqual([
      ['Project Atlas', fixture.ids.project],
      ['owner: Dana (since 2024)', fixture.ids.afterRename],
      ['status: building', fixture.ids.replace],
    ]);
    expect(page.origins[page.lines[1].origin].session).toBe('sess_20261202T110000_brav');
    expect(page.history.map((h: { kind: string; toolUseId: string }) => [h.kind, h.toolUseId])).toEqual([
      ['modified', fixture.ids.afterRename],
      ['renamed', fixture.ids.rename],
      ['modified', fixture.ids.replace],
      ['created', fixture.ids.project],
    ]);
    expect(page.history[1].from).toBe('/memories/projects/atlas.md');
  });

  it('shows the file as of an older commit, and a deleted file with the call that deleted it', async () => {
    const old = (await get(`/api/files/projects/atlas.md?at=${fixture.ids.project}`)).body;
    expect(old.lines.map((l: { text: string }) => l.text)).toEqual(['Project Atlas', 'owner: Dana', 'status: planning']);
    const deleted = (await get(`/api/files/scratch.md?at=${fixture.ids.delete}`)).body;
    expect(deleted.exists).toBe(false);
    expect(deleted.deletedBy.toolUseId).toBe(fixture.ids.delete);
    const reborn = (await get('/api/files/scratch.md')).body;
    expect(reborn.lines.map((l: { text: string }) => l.text)).toEqual(['second life']);
    expect(reborn.history.map((h: { kind: string; toolUseId: string }) => [h.kind, h.toolUseId])).toEqual([['created', fixture.ids.recreate]]);
    expect((await get('/files/never-existed.md')).status).toBe(404);
  });

  it('serves raw content as a plain-text attachment', async () => {
    const res = await get(`/raw/hostile/corpus.md`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="?corpus\.md"?$/);
    expect(res.text).toBe(XSS_PAYLOADS.join('\n') + '\n');
    const old = await get(`/raw/prefs.md?at=${fixture.ids.create}`);
    expect(old.text).toBe('# Preferences\n- tabs over spaces\n- dark mode\n');
    expect((await get('/raw/projects')).status).toBe(404);
  });
});

describe('tree, sessions and search', () => {
  it('browses the memory as it was after any call', async () => {
    const before = (await get(`/api/tree?at=${fixture.ids.replace}&dir=projects`)).body;
    expect(before.rows.map((r: { name: string }) => r.name)).toEqual(['atlas.md']);
    expect(before.rows[0].lastChange.toolUseId).toBe(fixture.ids.replace);
    const now = (await get('/api/tree?dir=projects')).body;
    expect(now.rows.map((r: { name: string }) => r.name)).toEqual(['atlas-v2.md']);
    expect((await get('/tree?dir=nope')).status).toBe(404);
  });

  it('lists sessions and shows one session call by call with a combined before/after diff', async () => {
    const list = (await get('/api/sessions')).body.sessions;
    expect(list.map((s: { id: string }) => s.id).sort()).toEqual([HOSTILE_SESSION, 'sess_20261202T100000_alfa', 'sess_20261202T110000_brav', 'sess_20261202T120000_char'].sort());
    // The same figures as `memgit sessions` (src/history/sessions.ts), plus the files touched.
    expect(list.find((s: { id: string }) => s.id === 'sess_20261202T110000_brav')).toMatchObject({ calls: 5, writes: 5, reverted: 0, files: 4 });
    const session = (await get('/api/sessions/sess_20261202T110000_brav')).body;
    expect(session.calls).toBe(5);
    expect(session.page.map((c: { step: number; toolUseId: string }) => [c.step, c.toolUseId])).toEqual([
      [1, fixture.ids.insert], [2, fixture.ids.rename], [3, fixture.ids.afterRename], [4, fixture.ids.scratch], [5, fixture.ids.delete],
    ]);
    const combined = session.combined.map((d: { status: string; newPath: string | null; oldPath: string | null }) => [d.status, d.newPath ?? d.oldPath]);
    expect(combined).toEqual([
      ['modified', '/memories/prefs.md'],
      ['added', '/memories/projects/atlas-v2.md'],
      ['deleted', '/memories/projects/atlas.md'],
    ]); // scratch.md was created and deleted inside the session: no net change
    expect((await get('/sessions/no_such_session')).status).toBe(404);
  });

  it('finds text in the current memory and the calls that introduced it', async () => {
    const res = (await get('/api/search?q=DANA (since')).body;
    expect(res.files).toEqual([{ rel: 'projects/atlas-v2.md', pathMatch: false, moreLines: false, lines: [{ no: 2, text: 'owner: Dana (since 2024)', cutBefore: false, cutAfter: false }] }]);
    expect(res.stoppedBy).toBeNull();
    expect(res.history.rows.map((r: { toolUseId: string }) => r.toolUseId)).toEqual([fixture.ids.afterRename]);
  });
});

describe('commits list: filters and cursor pagination', () => {
  let big: { dir: string; store: MemoryStore; app: Express; ids: string[] };

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-web-pages-'));
    const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    const ids: string[] = [];
    ids.push(await call(store, 'sess_many', { command: 'create', path: '/memories/log.md', file_text: 'start\n' }, 'toolu_page_000'));
    for (let i = 1; i < 120; i++) {
      const session = i % 3 === 0 ? 'sess_third' : 'sess_many';
      const file = i % 2 === 0 ? '/memories/log.md' : `/memories/notes/n${i % 5}.md`;
      const input = i % 2 === 0
        ? { command: 'insert', path: file, insert_line: 0, insert_text: `entry ${i}` }
        : { command: 'create', path: file, file_text: `note ${i}\n` };
      ids.push(await call(store, session, input, `toolu_page_${String(i).padStart(3, '0')}`));
    }
    big = { dir, store, app: createApp({ store }), ids };
  });

  afterAll(async () => {
    await big.store.close();
    fs.rmSync(big.dir, { recursive: true, force: true });
  });

  const pageOf = async (query: string) => {
    const res = await request(big.app).get(`/api/commits${query}`).set('Host', 'localhost');
    expect(res.status).toBe(200);
    return res.body as { rows: { toolUseId: string | null; commit: string }[]; older: string | null; newer: string | null; partial: boolean };
  };

  it('pages through everything newest first, 50 a page, with no gaps or repeats, and back', async () => {
    const seen: (string | null)[] = [];
    let page = await pageOf('');
    expect(page.newer).toBeNull();
    const pages = [page];
    while (page.older) {
      page = await pageOf(`?before=${page.older}`);
      pages.push(page);
    }
    for (const p of pages) seen.push(...p.rows.map((r) => r.toolUseId));
    expect(pages.map((p) => p.rows.length)).toEqual([50, 50, 21]); // 120 calls + the store's first commit
    expect(seen.slice(0, -1)).toEqual([...big.ids].reverse());
    expect(seen.at(-1)).toBeNull(); // "memgit: initialise store"
    const back = await pageOf(`?after=${pages[2].newer}`);
    expect(back.rows.map((r) => r.commit)).toEqual(pages[1].rows.map((r) => r.commit));
    const first = await pageOf(`?after=${back.newer}`);
    expect(first.rows.map((r) => r.commit)).toEqual(pages[0].rows.map((r) => r.commit));
  });

  it('filters by session, path prefix, command and introduced text', async () => {
    const third = await pageOf('?session=sess_third');
    expect(third.rows.map((r) => r.toolUseId)).toEqual(big.ids.filter((_, i) => i % 3 === 0 && i > 0).reverse());
    const notes = await pageOf('?path=notes&command=create');
    expect(notes.rows.length).toBe(50);
    expect(notes.rows.every((r) => /_(\d+)$/.test(r.toolUseId!) && Number(/_(\d+)$/.exec(r.toolUseId!)![1]) % 2 === 1)).toBe(true);
    const text = await pageOf('?text=entry 42');
    expect(text.rows.map((r) => r.toolUseId)).toEqual(['toolu_page_042']);
    const log = await pageOf('?path=/memories/log.md');
    expect(log.rows).toHaveLength(50);
    const logRest = await pageOf(`?path=/memories/log.md&before=${log.older}`);
    expect(logRest.rows).toHaveLength(10); // 59 inserts and the create
    expect(logRest.older).toBeNull(); // no "Older" link to an empty page
    expect(logRest.newer).toBe(logRest.rows[0].commit);
    const none = await pageOf('?path=/memories/nothing-here');
    expect(none.rows).toEqual([]);
    expect(none.older).toBeNull();
  });

  it('refuses malformed filters with a clear 400', async () => {
    for (const query of ['?since=yesterday', '?command=drop', '?before=0123456789abcdef', `?text=${'x'.repeat(201)}`, '?session=a&session=b']) {
      const res = await request(big.app).get(`/api/commits${query}`).set('Host', 'localhost');
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body.error).toEqual(expect.any(String));
    }
  });

  it('filters by time range', async () => {
    const future = await pageOf('?since=2999-01-01');
    expect(future.rows).toEqual([]);
    const all = await pageOf('?since=2000-01-01&until=2999-12-31T23:59');
    expect(all.rows).toHaveLength(50);
  });
});

describe('hostile content', () => {
  it('escapes every payload in file, commit, session, tree and search pages', async () => {
    const pages = [
      '/files/hostile/corpus.md',
      '/files/hostile/corpus.md?blame=0',
      `/commits/${HOSTILE_TOOL_USE}`,
      `/commits/${HOSTILE_TOOL_USE}?view=split`,
      `/sessions/${HOSTILE_SESSION}`,
      '/tree?dir=hostile',
      '/search?q=alert',
      '/',
    ];
    for (const url of pages) {
      const html = (await get(url)).text;
      for (const bad of ['<script>window.__pwned', '<img src=x', '<svg onload', '<iframe', 'href="javascript:', '<style>body', ' onmouseover=\'alert', '\u202E', '\u2066', '\u200B', '\u0007']) {
        expect([url, html.includes(bad)]).toEqual([url, false]);
      }
      if (url.startsWith('/files') || url.startsWith('/commits') || url.startsWith('/sessions')) {
        expect(html).toContain('&lt;script&gt;window.__pwned = 1; alert(&quot;script&quot;)&lt;/script&gt;');
        // Template syntax in data is shown as text, never evaluated.
        expect(html).toContain('{{ 7*7 }} {{ range.constructor(&quot;alert(1)&quot;)() }}');
        expect(html).toContain('{% raw %}{{ 7*7 }}{% endraw %} ${7*7} #{7*7}');
        expect(html).toContain('<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span>');
      }
    }
  });

  it('links hostile ids and file names only as same-origin paths', async () => {
    const html = (await get('/tree?dir=hostile')).text;
    for (const name of HOSTILE_NAMES) {
      expect(html).toContain(`href="/files/hostile/${encodeURIComponent(name).replace(/'/g, '&#39;')}"`);
    }
    const hrefs = [...(await get('/')).text.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs.length).toBeGreaterThan(10);
    for (const href of hrefs) expect(href).toMatch(/^(\/(?!\/)|#)/);
    expect(hrefs).toContain(`/sessions/${encodeURIComponent(HOSTILE_SESSION)}`);
    for (const name of HOSTILE_NAMES) {
      const res = await get(`/files/hostile/${encodeURIComponent(name)}`);
      expect([name, res.status]).toEqual([name, 200]);
      expect(res.body).toBeDefined();
    }
  });
});

describe('file URLs written with /memories (the path as pages show it)', () => {
  it('redirect to the file, its raw content or the folder, keeping the query', async () => {
    const cases: [string, string][] = [
      ['/files/memories/prefs.md', '/files/prefs.md'],
      [`/files/memories/projects/atlas-v2.md?at=${fixture.ids.afterRename}&blame=0`, `/files/projects/atlas-v2.md?at=${fixture.ids.afterRename}&blame=0`],
      ['/raw/memories/prefs.md', '/raw/prefs.md'],
      ['/files/memories/hostile/%23hash%20100%25.md', '/files/hostile/%23hash%20100%25.md'],
      ['/files/memories', '/tree'],
      ['/files/memories/projects', '/tree?dir=projects'],
      // A file that exists only at an older point redirects at that point.
      [`/files/memories/projects/atlas.md?at=${fixture.ids.replace}`, `/files/projects/atlas.md?at=${fixture.ids.replace}`],
    ];
    for (const [from, to] of cases) {
      const res = await get(from);
      expect([from, res.status, res.headers.location]).toEqual([from, 302, to]);
      expect([from, (await get(to)).status]).toEqual([from, 200]);
    }
    for (const missing of ['/files/memories/nope.md', '/raw/memories/projects', '/files/nope.md']) expect([missing, (await get(missing)).status]).toEqual([missing, 404]);
    // A point that is none: no redirect, the page's own answer.
    const badPoint = await get('/files/memories/prefs.md?at=not-a-point');
    expect(badPoint.status).toBe(404);
    expect(badPoint.text).toContain('not-a-point');
  });

  it('leave a path alone that names a real file under a folder called memories', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-web-memories-folder-'));
    const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    try {
      await call(store, 'sess_m', { command: 'create', path: '/memories/memories/inner.md', file_text: 'inner\n' });
      await call(store, 'sess_m', { command: 'create', path: '/memories/inner.md', file_text: 'outer\n' });
      const own = createApp({ store, log: () => undefined });
      const page = await request(own).get('/files/memories/inner.md').set('Host', '127.0.0.1:3000');
      expect(page.status).toBe(200);
      expect(page.text).toContain('/memories/memories/inner.md');
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a store of memgit server', () => {
  it('names its store (escaped) in the title and header of every page and links to the list of stores', async () => {
    const served = createApp({ store: fixture.store, log: () => undefined, serverStore: { id: 'acme"<b>&', listUrl: '/' }, command: 'memgit server' });
    for (const url of ['/', '/commits', '/no-such-page']) {
      const res = await request(served).get(url).set('Host', '127.0.0.1:3000');
      expect(res.text).toMatch(/<title>[^<]+ · acme&quot;&lt;b&gt;&amp; · memgit<\/title>/);
      expect(res.text).toContain('<p class="store-crumb"><a data-server-link href="/">Stores</a> <span class="sep">/</span> <a class="store-id" href="/" title="this store\'s overview">acme&quot;&lt;b&gt;&amp;</a></p>');
      expect(res.text).not.toContain('<b>');
    }
    // A UI of one store (memgit serve) names none.
    expect((await get('/')).text).not.toContain('store-crumb');
    expect((await get('/')).text).toContain('<title>Overview · memgit</title>');
  });
});

describe('requests from other hosts', () => {
  it('refuses a Host that is not this server (DNS rebinding) and accepts loopback names', async () => {
    const rebinding = await request(app).get('/').set('Host', 'attacker.example:3000');
    expect(rebinding.status).toBe(421);
    expect(rebinding.text).not.toContain('Overview');
    expect((await request(app).get('/api').set('Host', 'attacker.example')).status).toBe(421);
    for (const host of ['localhost:3000', '127.0.0.1', '[::1]:8080']) {
      expect([host, (await request(app).get('/').set('Host', host)).status]).toEqual([host, 200]);
    }
  });

  it('answers only GET: there is no state-changing route yet', async () => {
    const res = await request(app).post('/commits').set('Host', 'localhost').send('x=1');
    expect(res.status).toBe(404);
  });
});

describe('history through a directory rename', () => {
  it('follows each file of a renamed directory back to its creation', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-web-dirrename-'));
    const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    try {
      const s = 'sess_dirs';
      const a = await call(store, s, { command: 'create', path: '/memories/team/alice.md', file_text: 'Alice\nrole: design\n' });
      const b = await call(store, s, { command: 'create', path: '/memories/team/bob.md', file_text: 'Bob\nrole: backend\n' });
      const edit = await call(store, s, { command: 'str_replace', path: '/memories/team/alice.md', old_str: 'role: design', new_str: 'role: design lead' });
      const move = await call(store, s, { command: 'rename', old_path: '/memories/team', new_path: '/memories/people' });
      const web = createApp({ store });
      const page = (await request(web).get('/api/files/people/alice.md').set('Host', 'localhost')).body;
      expect(page.history.map((h: { kind: string; toolUseId: string }) => [h.kind, h.toolUseId])).toEqual([
        ['renamed', move], ['modified', edit], ['created', a],
      ]);
      expect(page.lines.map((l: { text: string; origin: string }) => [l.text, page.origins[l.origin].toolUseId])).toEqual([
        ['Alice', a], ['role: design lead', edit],
      ]);
      const bob = (await request(web).get('/api/files/people/bob.md').set('Host', 'localhost')).body;
      expect(bob.history.map((h: { toolUseId: string }) => h.toolUseId)).toEqual([move, b]);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('points and the compare view', () => {
  it('?at= takes any point form (HEAD~N, an ISO time); a malformed one is a 400', async () => {
    const history = fixture.store.history;
    const headMinusOne = history.at(history.size - 2)!.commit;
    const res = await get('/api/tree?at=HEAD~1');
    expect(res.status).toBe(200);
    expect(res.body.at.commit).toBe(headMinusOne);
    expect((await get('/api/tree?at=2999-01-01')).body.at.commit).toBe(history.head!.commit);
    expect((await get('/api/tree?at=2026-02-30')).status).toBe(400);
    expect((await get(`/api/tree?at=HEAD~${history.size}`)).status).toBe(404);
  });

  it('/compare and /api/compare: the files that differ between two points, limited to a path', async () => {
    const res = await get(`/api/compare?from=${fixture.ids.create}&to=${fixture.ids.project}`);
    expect(res.status).toBe(200);
    expect(res.body.from.toolUseId).toBe(fixture.ids.create);
    expect(res.body.to.toolUseId).toBe(fixture.ids.project);
    expect(res.body.diffs.map((d: { status: string; newPath: string }) => [d.status, d.newPath])).toEqual([['added', '/memories/projects/atlas.md']]);
    const limited = await get(`/api/compare?from=${fixture.ids.create}&to=${fixture.ids.project}&path=/memories/prefs.md`);
    expect(limited.body.diffs).toEqual([]);
    const page = await get(`/compare?from=${fixture.ids.create}&to=${fixture.ids.project}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Project Atlas');
    expect((await get('/compare')).status).toBe(200); // the empty form
    expect((await get(`/api/compare?from=${fixture.ids.create}&path=../etc`)).status).toBe(400);
    expect((await get('/api/compare?from=nope')).status).toBe(404);
  });
});
