/**
 * One memory budget for many caches. Every cache keeps its own bounds (entries, bytes, largest entry);
 * a budget adds one more, shared: the estimated bytes of all caches that draw on it together. When the
 * total passes the budget, the least recently used entries are dropped, whichever cache and store they
 * belong to. `memgit server` gives every open store (its decoded blobs, trees and pack objects) and every
 * store's audit UI (texts, blames, diffs) the same budget, so that memory does not grow with the number
 * of open stores: one tenant reading many stores pushes out cached entries, never the process's bound.
 */

/** One cached entry as the budget sees it: how to drop it from its cache. */
export interface BudgetSlot {
  /** Remove the entry from its cache (called by the budget; the cache must not call `release` then). */
  evict(): void;
}

export class CacheBudget {
  /** Slots by recency (first: least recently used) with their weights. */
  private readonly slots = new Map<BudgetSlot, number>();
  private total = 0;
  private evicting = false;

  constructor(readonly maxBytes: number) {
    if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) throw new TypeError(`a cache budget must be a positive number of bytes, got ${JSON.stringify(maxBytes)}`);
  }

  /** Estimated bytes held by every cache on this budget. */
  get used(): number {
    return this.total;
  }

  /** Entries held by every cache on this budget. */
  get entries(): number {
    return this.slots.size;
  }

  /**
   * Account a new entry of `weight` bytes as the most recently used, then drop the least recently used
   * entries of any cache until the total fits. False (nothing accounted) when the entry alone would not
   * fit: the cache must not keep it.
   */
  charge(slot: BudgetSlot, weight: number): boolean {
    if (weight > this.maxBytes) return false;
    this.release(slot);
    this.slots.set(slot, weight);
    this.total += weight;
    this.shrink(slot);
    return true;
  }

  /** The entry was used: it is now the most recently used. */
  touch(slot: BudgetSlot): void {
    const weight = this.slots.get(slot);
    if (weight === undefined) return;
    this.slots.delete(slot);
    this.slots.set(slot, weight);
  }

  /** The cache dropped the entry itself. */
  release(slot: BudgetSlot): void {
    const weight = this.slots.get(slot);
    if (weight === undefined) return;
    this.slots.delete(slot);
    this.total -= weight;
  }

  private shrink(keep: BudgetSlot): void {
    if (this.evicting) return;
    this.evicting = true;
    try {
      for (const [slot, weight] of this.slots) {
        if (this.total <= this.maxBytes) break;
        if (slot === keep) continue;
        this.slots.delete(slot);
        this.total -= weight;
        slot.evict();
      }
    } finally {
      this.evicting = false;
    }
  }
}
