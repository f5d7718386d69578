import { LruMap } from '../store';
import type { BudgetSlot, CacheBudget } from '../store';
import type { BlameState } from '../store/history-index/blame-step';

/**
 * Bounded caches of things that never change once written (git objects are immutable, so nothing here
 * is ever invalidated — only evicted when a cache is full), with the byte estimates that bound them.
 */

/**
 * Memory budgets of the read model's caches, in estimated bytes (a JS string costs about 2 bytes a
 * character plus a header; an array 8 bytes a slot). An entry heavier than its cache's per-entry cap is
 * not cached at all: a blame state of a huge file is recomputed rather than allowed to push everything
 * else out.
 */
const MIB = 1024 * 1024;

export const HISTORY_CACHE_BUDGETS = {
  texts: { total: 64 * MIB, entry: 8 * MIB },
  blames: { total: 64 * MIB, entry: 8 * MIB },
  sizes: { total: 4 * MIB, entry: 1024 },
} as const;

const STRING_HEADER = 24;
const SLOT = 8;

export function stringBytes(text: string): number {
  return STRING_HEADER + text.length * 2;
}

/** A blame state: two arrays of n slots, n line strings (origins share the commit id strings). */
export function blameStateBytes(state: BlameState): number {
  let bytes = 64 + state.lines.length * 2 * SLOT;
  for (const line of state.lines) bytes += stringBytes(line);
  return bytes;
}

/** Any render-ready value (diff views, combined diffs): strings by length, objects and arrays by slots. */
export function roughBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return stringBytes(value);
  if (value === null || typeof value !== 'object' || depth > 8) return SLOT;
  let bytes = 32;
  if (Array.isArray(value)) {
    for (const item of value) bytes += SLOT + roughBytes(item, depth + 1);
  } else {
    for (const key in value) bytes += SLOT * 2 + roughBytes((value as Record<string, unknown>)[key], depth + 1);
  }
  return bytes;
}

/**
 * A Map that forgets its least recently used entries beyond `limit` entries or, when `weigh` is given,
 * beyond `maxWeight` in total; an entry heavier than `maxEntryWeight` is never stored. With a shared
 * `budget`, entries are also dropped when the budget needs room (whichever cache used it least recently).
 */
export class LruCache<K, V> {
  private readonly map = new LruMap<K, { value: V; weight: number; slot: BudgetSlot | null }>();
  private total = 0;
  constructor(
    private readonly limit: number,
    private readonly weigh?: (value: V) => number,
    private readonly maxWeight = Infinity,
    private readonly maxEntryWeight = maxWeight,
    private readonly budget?: CacheBudget,
  ) {}

  get(key: K): V | undefined {
    const slot = this.map.get(key); // now the most recently used
    if (slot !== undefined) {
      if (slot.slot) this.budget!.touch(slot.slot);
    }
    return slot?.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weigh?.(value) ?? 0;
    if (weight > this.maxEntryWeight || weight > this.maxWeight) return;
    const entry = { value, weight, slot: null as BudgetSlot | null };
    if (this.budget) {
      const slot: BudgetSlot = { evict: () => this.map.peek(key) === entry && this.delete(key) };
      // Counted as the budget sees it (at least a small header per entry): a cache of tiny entries is no free ride.
      if (!this.budget.charge(slot, Math.max(weight, 64))) return;
      entry.slot = slot;
    }
    this.map.set(key, entry);
    this.total += weight;
    while (this.map.size > this.limit || this.total > this.maxWeight) this.delete(this.map.oldestKey() as K);
  }

  /** Estimated bytes held. */
  get weight(): number {
    return this.total;
  }

  get size(): number {
    return this.map.size;
  }

  private delete(key: K): void {
    const old = this.map.peek(key);
    if (old === undefined) return;
    this.map.delete(key);
    this.total -= old.weight;
    if (old.slot) this.budget!.release(old.slot);
  }
}
