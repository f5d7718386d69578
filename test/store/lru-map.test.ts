/**
 * LruMap (src/store/lru-map.ts), the recency order under the pack cache, recent blobs and the read model's
 * caches: checked against a plain Map kept in recency order by delete-and-set, over random operations.
 */
import { LruMap } from '../../src/store/lru-map';
import { mulberry32 } from '../support/random';

test('get makes a key the newest, peek does not, oldestKey names the next to evict', () => {
  const lru = new LruMap<string, number>();
  lru.set('a', 1);
  lru.set('b', 2);
  lru.set('c', 3);
  expect(lru.oldestKey()).toBe('a');
  expect(lru.get('a')).toBe(1);
  expect([...lru.keys()]).toEqual(['b', 'c', 'a']);
  expect(lru.peek('b')).toBe(2);
  expect(lru.oldestKey()).toBe('b');
  lru.set('b', 20); // setting an existing key updates it and makes it the newest
  expect([...lru.keys()]).toEqual(['c', 'a', 'b']);
  expect(lru.delete('a')).toBe(true);
  expect(lru.delete('a')).toBe(false);
  expect([...lru.keys()]).toEqual(['c', 'b']);
  expect(lru.get('missing')).toBeUndefined();
  lru.clear();
  expect(lru.size).toBe(0);
  expect(lru.oldestKey()).toBeUndefined();
});

test('behaves as a Map kept in recency order, over 20,000 random operations', () => {
  const random = mulberry32(7);
  const lru = new LruMap<number, number>();
  const model = new Map<number, number>();
  for (let i = 0; i < 20_000; i++) {
    const key = Math.floor(random() * 300);
    const roll = random();
    if (roll < 0.4) {
      const had = model.get(key);
      if (had !== undefined) {
        model.delete(key);
        model.set(key, had);
      }
      expect(lru.get(key)).toBe(had);
    } else if (roll < 0.8) {
      model.delete(key);
      model.set(key, i);
      lru.set(key, i);
    } else if (roll < 0.9) {
      expect(lru.delete(key)).toBe(model.delete(key));
    } else if (model.size > 0) {
      const oldest = model.keys().next().value!;
      expect(lru.oldestKey()).toBe(oldest);
      model.delete(oldest);
      lru.delete(oldest);
    }
    expect(lru.size).toBe(model.size);
  }
  expect([...lru.keys()]).toEqual([...model.keys()]);
});
