/**
 * Shortened ids: on one page, two different ids never share a label (the demo's sessions
 * sess_20261124T091500_acme and sess_20261130T091500_acme used to both read `sess_20…91500_acme`), and
 * every shortened id carries the full id in its title. The labeller itself, then every page of the demo
 * store and of a store of adversarial ids (long shared prefixes and suffixes), over HTTP.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/web/app';
import { distinctLabels, LabelSlot, labelPlaceholder, resolveLabels } from '../../src/web/labels';
import { rollbackRoutes } from '../../src/web/routes/operator';
import { buildDemoStore } from '../../src/agent/demo/build';
import { MemoryStore } from '../../src/store/memory-store';
import { mulberry32 } from '../support/random';

const DEMO_SESSIONS = ['sess_20261124T091500_acme', 'sess_20261126T143000_acme', 'sess_20261130T091500_acme'];
const HOST = '127.0.0.1:3000';
const TOKEN = 'labels-test-operator-token-2424';

const mid = (id: string, max = 18): LabelSlot => ({ id, max, cut: 'middle' });

/** Every label that names two different ids (none expected). */
function collisions(slots: LabelSlot[], labels: string[]): string[] {
  const byLabel = new Map<string, Set<string>>();
  labels.forEach((label, i) => byLabel.set(label, (byLabel.get(label) ?? new Set()).add(slots[i].id)));
  return [...byLabel].filter(([, ids]) => ids.size > 1).map(([label, ids]) => `${label}: ${[...ids].join(', ')}`);
}

describe('distinctLabels', () => {
  it('cuts the demo sessions so that the three read differently; a lone id keeps the usual cut', () => {
    const labels = distinctLabels(DEMO_SESSIONS.map((id) => mid(id)));
    expect(new Set(labels).size).toBe(3);
    // The first and third differ only in the date: too little is saved by a cut, so they show whole.
    expect(labels).toEqual(['sess_20261124T091500_acme', 'sess_20…43000_acme', 'sess_20261130T091500_acme']);
    expect(distinctLabels([mid('sess_20261124T091500_acme')])).toEqual(['sess_20…91500_acme']);
    expect(distinctLabels([mid('toolu_01B2OlatoaybhHitbwJuQ5gK')])).toEqual(['toolu_0…itbwJuQ5gK']);
    expect(distinctLabels([mid('toolu_01'), mid('😀'.repeat(30))])).toEqual(['toolu_01', `${'😀'.repeat(7)}…${'😀'.repeat(10)}`]);
  });

  it('keeps the part that differs when ids share long prefixes and suffixes', () => {
    const ids = ['1', '2', '3'].map((d) => `sess_${'a'.repeat(40)}${d}${'z'.repeat(40)}_acme`);
    const slots = ids.map((id) => mid(id));
    const labels = distinctLabels(slots);
    expect(collisions(slots, labels)).toEqual([]);
    labels.forEach((label, i) => {
      expect(label.length).toBeLessThan(ids[i].length);
      expect(label.startsWith('sess_a')).toBe(true);
      expect(ids[i].startsWith(label.split('…')[0])).toBe(true);
      expect(ids[i].endsWith(label.split('…')[1])).toBe(true);
    });
    // Differing only near the end: the cheaper widening is the end's.
    const tails = distinctLabels([mid(`toolu_${'x'.repeat(60)}A${'y'.repeat(11)}`), mid(`toolu_${'x'.repeat(60)}B${'y'.repeat(11)}`)]);
    expect(tails).toEqual([`toolu_x…A${'y'.repeat(11)}`, `toolu_x…B${'y'.repeat(11)}`]);
    // Differing only near the start: the start widens.
    const p = 'p'.repeat(10);
    const heads = distinctLabels([mid(`sess_${p}A${'q'.repeat(60)}`), mid(`sess_${p}B${'q'.repeat(60)}`)]);
    expect(heads).toEqual([`sess_${p}A…${'q'.repeat(10)}`, `sess_${p}B…${'q'.repeat(10)}`]);
  });

  it('never lets a cut label equal another id shown whole, and gives one id one label per style', () => {
    const slots = [mid('sess_20261124T091500_acme'), { id: 'sess_20…91500_acme', max: 0, cut: 'middle' as const }, mid('sess_20261124T091500_acme', 0)];
    const labels = distinctLabels(slots);
    expect(collisions(slots, labels)).toEqual([]);
    expect(labels[1]).toBe('sess_20…91500_acme');
    expect(labels[2]).toBe('sess_20261124T091500_acme');
  });

  it('widens commit-id prefixes until they differ', () => {
    const a = `abcdef0123${'4'.repeat(30)}`;
    const b = `abcdef0123${'5'.repeat(30)}`;
    const c = `9${'0'.repeat(39)}`;
    expect(distinctLabels([a, b, c].map((id) => ({ id, max: 10, cut: 'start' as const })))).toEqual(['abcdef01234', 'abcdef01235', '9000000000']);
  });

  it('holds for random ids drawn from a small alphabet (many near-collisions)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = mulberry32(seed);
      const ids = new Set<string>();
      while (ids.size < 60) {
        let id = 'sess_';
        const length = 10 + Math.floor(random() * 30);
        for (let k = 0; k < length; k++) id += 'ab'[Math.floor(random() * 2)];
        ids.add(id);
      }
      const slots = [...ids].flatMap((id) => [mid(id), mid(id, 0), { id, max: 8, cut: 'start' as const }]);
      const labels = distinctLabels(slots);
      expect([seed, collisions(slots, labels)]).toEqual([seed, []]);
    }
  });
});

describe('label placeholders', () => {
  it('are resolved after rendering, escaped and with invisible characters marked; stored text cannot forge one', () => {
    const html = `<p>${labelPlaceholder('a<b>"&\u202e', 0)} ${labelPlaceholder('sess_20261124T091500_acme', 18)} ${labelPlaceholder('sess_20261130T091500_acme', 18)}</p>`;
    expect(resolveLabels(html)).toBe(
      '<p>a&lt;b&gt;&quot;&amp;<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span> sess_20261124T091500_acme sess_20261130T091500_acme</p>',
    );
    expect(String(labelPlaceholder(null))).toBe('');
    // What a template autoescapes can never spell a placeholder.
    const escapedForgery = '&lt;mg-label cut=&quot;middle&quot; max=&quot;0&quot; id=&quot;x&quot;&gt;';
    expect(resolveLabels(`<p>${escapedForgery}</p>`)).toBe(`<p>${escapedForgery}</p>`);
  });
});

/** `<a class="id|session" … title="full id">label</a>` of a page: label → the full ids it names. */
function pageLabels(html: string): Map<string, Set<string>> {
  const labels = new Map<string, Set<string>>();
  for (const [, , attributes, label] of html.matchAll(/<a class="(id|id op|id old-id|session)"([^>]*)>(.*?)<\/a>/g)) {
    const title = /\stitle="([^"]*)"/.exec(attributes);
    expect([label, title !== null]).toEqual([label, true]);
    labels.set(label, (labels.get(label) ?? new Set()).add(title![1]));
  }
  return labels;
}

function sharedLabels(url: string, html: string): string[] {
  expect(html).not.toContain('mg-label');
  return [...pageLabels(html)].filter(([, ids]) => ids.size > 1).map(([label, ids]) => `${url}: ${label} names ${[...ids].join(' and ')}`);
}

async function operatorAgent(app: Express) {
  const agent = request.agent(app);
  const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];
  const login = await agent.get('/login').set('Host', HOST);
  const res = await agent
    .post('/login')
    .set('Host', HOST)
    .set('Origin', `http://${HOST}`)
    .type('form')
    .send({ operator: 'dana', token: TOKEN, _csrf: csrf(login.text), next: '/redact' });
  expect(res.status).toBe(303);
  const form = await agent.get('/redact').set('Host', HOST);
  return {
    preview: (fields: Record<string, string>) =>
      agent.post('/redact/preview').set('Host', HOST).set('Origin', `http://${HOST}`).type('form').send({ ...fields, _csrf: csrf(form.text) }),
  };
}

describe('pages of the demo store', () => {
  let dir: string;
  let store: MemoryStore;
  let app: Express;

  beforeAll(async () => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-labels-demo-')), 'store');
    await buildDemoStore(dir);
    store = await MemoryStore.open(dir, { log: () => undefined });
    app = createApp({ store, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  });

  afterAll(async () => {
    await store?.close();
    if (dir) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('blame gutter, file history, lists and session pages never give two sessions or calls one label', async () => {
    const overview = await request(app).get('/api').set('Host', HOST);
    const files: string[] = overview.body.files.map((f: { rel: string }) => f.rel);
    expect(files).toContain('customers/acme-logistics/profile.md');
    const urls = ['/', '/commits', '/sessions', ...DEMO_SESSIONS.map((s) => `/sessions/${s}`), ...files.map((f) => `/files/${f}`)];
    const problems: string[] = [];
    for (const url of urls) {
      const res = await request(app).get(url).set('Host', HOST);
      expect([url, res.status]).toEqual([url, 200]);
      problems.push(...sharedLabels(url, res.text));
    }
    expect(problems).toEqual([]);
    // The page the issue names: the file both sessions wrote, its blame gutter and its history.
    const profile = await request(app).get('/files/customers/acme-logistics/profile.md').set('Host', HOST);
    const labels = pageLabels(profile.text);
    const named = [...labels.values()].flatMap((ids) => [...ids]);
    expect(named).toEqual(expect.arrayContaining([DEMO_SESSIONS[0], DEMO_SESSIONS[2]]));
  });

  it('the redaction preview labels the sessions apart', async () => {
    const operator = await operatorAgent(app);
    const res = await operator.preview({ kind: 'path', path: '/memories/customers/acme-logistics/profile.md', reason: 'test' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Every commit and line it will change');
    const sessions = [...pageLabels(res.text)].filter(([, ids]) => [...ids].some((id) => DEMO_SESSIONS.includes(id)));
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    expect(sharedLabels('/redact/preview', res.text)).toEqual([]);
  });
});

describe('pages of a store of adversarial ids', () => {
  let dir: string;
  let store: MemoryStore;
  let app: Express;
  const sessions = [
    ...['1', '2', '3'].map((d) => `sess_${'a'.repeat(40)}${d}${'z'.repeat(40)}_acme`),
    ...DEMO_SESSIONS,
    'sess_20.91500_acme',
  ];
  const calls: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-labels-adversarial-'));
    store = await MemoryStore.open(path.join(dir, 'store'), { log: () => undefined, fsync: false });
    let n = 0;
    for (const session of sessions) {
      for (const middle of ['A', 'B']) {
        const id = `toolu_${'x'.repeat(50)}${middle}${n}${'y'.repeat(50)}`;
        calls.push(id);
        const input =
          n === 0
            ? { command: 'create', path: '/memories/shared.md', file_text: 'line 0\n' }
            : { command: 'insert', path: '/memories/shared.md', insert_line: n, insert_text: `line ${n}` };
        const result = await store.execute({ type: 'tool_use', id, name: 'memory', input }, { session });
        expect(result.is_error).toBeFalsy();
        n++;
      }
    }
    app = createApp({ store, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  });

  afterAll(async () => {
    await store?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('no page gives two ids one label, and each label is the full id or a cut of it', async () => {
    const urls = ['/', '/commits', '/sessions', '/files/shared.md', ...sessions.map((s) => `/sessions/${s}`)];
    const problems: string[] = [];
    for (const url of urls) {
      const res = await request(app).get(url).set('Host', HOST);
      expect([url, res.status]).toEqual([url, 200]);
      problems.push(...sharedLabels(url, res.text));
      for (const [label, ids] of pageLabels(res.text)) {
        const id = [...ids][0];
        const [head, tail] = label.split('…');
        // Whole, a cut in the middle, or (commit ids) a prefix.
        if (tail === undefined) expect([url, id.startsWith(label)]).toEqual([url, true]);
        else expect([url, id.startsWith(head) && id.endsWith(tail)]).toEqual([url, true]);
      }
    }
    expect(problems).toEqual([]);
    const blame = await request(app).get('/files/shared.md').set('Host', HOST);
    const gutterSessions = [...blame.text.matchAll(/<a class="session"[^>]*>(.*?)<\/a>/g)].map((m) => m[1]);
    expect(new Set(gutterSessions).size).toBe(sessions.length);
  });

  it('the redaction preview too', async () => {
    const operator = await operatorAgent(app);
    const res = await operator.preview({ kind: 'path', path: '/memories/shared.md', reason: 'test' });
    expect(res.status).toBe(200);
    expect(sharedLabels('/redact/preview', res.text)).toEqual([]);
  });
});
