/**
 * The UI's dream pages (issue 28), read-only: /dreams and /dreams/<id> with their JSON twins; a dream's
 * instructions are hostile text, escaped; an unknown id is 404.
 */
import request from 'supertest';
import { MemoryStore } from '../../src/store/memory-store';
import { createApp } from '../../src/web/app';
import { QUIET, toolUse, useTempDir } from '../store/git-helpers';

const tempDir = useTempDir();

test('the dreams list and one dream, as HTML and JSON', async () => {
  const store = await MemoryStore.open(tempDir(), { ...QUIET, fsync: false });
  try {
    await store.execute(toolUse('toolu_w1', { command: 'create', path: '/memories/notes.md', file_text: 'alpha\n' }), { session: 'sess_a' });
    const app = createApp({ store, log: () => undefined });
    const get = (url: string) => request(app).get(url).set('Host', '127.0.0.1:3000');
    expect((await get('/dreams')).text).toContain('No dreams yet.');

    const dream = await store.beginDream({ inputs: [{ type: 'sessions', session_ids: ['sess_a'] }], model: 'claude-test-model', instructions: '<script>alert(1)</script> keep it short' });
    await store.execute(toolUse('toolu_d1', { command: 'str_replace', path: '/memories/notes.md', old_str: 'alpha', new_str: 'beta' }), { session: `dream-${dream.id}`, dream: dream.id });
    const ended = await store.finishDream(dream.id, 'completed');

    const list = await get('/dreams');
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="/dreams/${dream.id}"`);
    expect(list.text).toContain(ended.outputs[0].review_id);
    expect((await get('/api/dreams')).body).toEqual({ dreams: [ended] });

    const page = await get(`/dreams/${dream.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('completed');
    expect(page.text).not.toContain('<script>alert(1)</script>');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; keep it short');
    expect(page.text).toContain('href="/files/memories/notes.md"');
    expect(page.text).toContain(`memgit review show ${ended.outputs[0].review_id}`);
    expect((await get(`/api/dreams/${dream.id}`)).body).toEqual({ dream: ended });
    expect((await get('/dreams/drm_000000000000000000000000')).status).toBe(404);
    expect((await get('/api/dreams/..%2F..%2Fetc')).status).toBe(404);
  } finally {
    await store.close();
  }
});
