/**
 * One cache budget shared by many caches and stores (issue 25, item 7): the estimated bytes of every cache
 * on a budget stay within it, the least recently used entries go first whichever cache holds them, and a
 * closed store gives its share back.
 */
import { CacheBudget } from '../../src/store/cache-budget';
import { MemoryStore } from '../../src/store/memory-store';
import { createAuditContext, LruCache, stringBytes } from '../../src/web/services/context';
import { QUIET, toolUse, useTempDir } from './git-helpers';

const tempDir = useTempDir();

describe('CacheBudget', () => {
  it('keeps the caches on it within its bytes, dropping the least recently used entry of any cache', () => {
    const budget = new CacheBudget(1000);
    const a = new LruCache<string, string>(100, stringBytes, Infinity, Infinity, budget);
    const b = new LruCache<string, string>(100, stringBytes, Infinity, Infinity, budget);
    a.set('a1', 'x'.repeat(188)); // 400 bytes
    b.set('b1', 'y'.repeat(188));
    a.get('a1'); // a1 is now more recently used than b1
    a.set('a2', 'z'.repeat(188)); // 1200 > 1000: b1 goes
    expect([a.get('a1'), b.get('b1'), a.get('a2')].map((v) => v?.length)).toEqual([188, undefined, 188]);
    expect(budget.used).toBe(800);
    expect(budget.used).toBe(a.weight + b.weight);
    // An entry the budget could never hold is not cached, and pushes nothing out.
    b.set('huge', 'h'.repeat(600));
    expect(b.get('huge')).toBeUndefined();
    expect(budget.used).toBe(800);
    // A cache's own bounds still hold, and what it drops is given back to the budget.
    const small = new LruCache<string, string>(1, stringBytes, Infinity, Infinity, budget);
    small.set('s1', 'a');
    small.set('s2', 'b');
    expect(small.size).toBe(1);
    expect(budget.entries).toBe(3);
  });

  it('many stores and their audit caches on one budget: the total stays within it, and closing a store gives its share back', async () => {
    const budget = new CacheBudget(128 * 1024);
    const stores: MemoryStore[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const store = await MemoryStore.open(tempDir() + `/s${i}`, { ...QUIET, flags: false, cacheBudget: budget });
        stores.push(store);
        const ctx = createAuditContext(store, budget);
        for (let v = 0; v < 4; v++) {
          await store.execute(toolUse(`toolu_${i}_${v}`, { command: 'create', path: `/memories/f${v}.md`, file_text: `${i}-${v}\n`.repeat(3000) }), { session: 's' });
          ctx.texts.set(`t${v}`, 'x'.repeat(30_000));
          expect(budget.used).toBeLessThanOrEqual(budget.maxBytes);
        }
      }
      expect(budget.used).toBeGreaterThan(0);
      const before = budget.used;
      await stores[5].close();
      expect(budget.used).toBeLessThan(before);
      expect(budget.used).toBeLessThanOrEqual(budget.maxBytes);
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
