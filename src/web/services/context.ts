import type { BudgetSlot, CacheBudget } from '../../store/cache-budget';
import { blobText } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import type { MemoryStore } from '../../store/memory-store';
import { AmbiguousPointError, AmbiguousRefError, CommitNotFoundError, InvalidPointError } from '../../store/errors';
import type { RefKind } from '../../store/resolve-ref';
import { MEMORY_ROOT } from '../../store/git-reader';
import { commitRecord, CommitRecord } from '../../history/records';

/**
 * What every audit service needs: the store and caches of things that never change once written
 * (blob texts by oid, per-commit line counts, blame states by commit+path). Git objects are immutable,
 * so nothing here is ever invalidated — only evicted when a cache is full.
 */
export interface AuditContext {
  store: MemoryStore;
  texts: LruCache<string, string>;
  lineStats: LruCache<string, { added: number; removed: number }>;
  /** Blame state after a revision, keyed by `${commit}\0${repoPath}` (a commit fixes its whole chain). */
  blames: LruCache<string, BlameState>;
  /** Blob sizes in bytes by oid. */
  sizes: LruCache<string, number>;
  /** Render-ready diffs of a commit, by commit id. */
  diffs: LruCache<string, unknown>;
  /** The sessions list, valid while the history's size and the call log's version are this (`size:version`). */
  sessionList?: { version: string; list: unknown };
}

export interface BlameState {
  lines: string[];
  /** For each line, the commit of the revision that wrote it. */
  origins: string[];
}

/**
 * Memory budgets of the caches, in estimated bytes (a JS string costs about 2 bytes a character plus a
 * header; an array 8 bytes a slot). An entry heavier than its cache's per-entry cap is not cached at all:
 * a blame state of a huge file is recomputed rather than allowed to push everything else out.
 */
const MIB = 1024 * 1024;

export const CACHE_BUDGETS = {
  texts: { total: 64 * MIB, entry: 8 * MIB },
  blames: { total: 64 * MIB, entry: 8 * MIB },
  diffs: { total: 32 * MIB, entry: 4 * MIB },
  lineStats: { total: 4 * MIB, entry: 1024 },
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
 * The caches of one store's audit UI. With `budget` (memgit server: one budget for every open store and
 * its UI), their entries also count against that shared budget, on top of the bounds above.
 */
export function createAuditContext(store: MemoryStore, budget?: CacheBudget): AuditContext {
  const b = CACHE_BUDGETS;
  return {
    store,
    texts: new LruCache(20_000, stringBytes, b.texts.total, b.texts.entry, budget),
    lineStats: new LruCache(50_000, () => 96, b.lineStats.total, b.lineStats.entry, budget),
    blames: new LruCache(2000, blameStateBytes, b.blames.total, b.blames.entry, budget),
    sizes: new LruCache(100_000, () => 80, b.sizes.total, b.sizes.entry, budget),
    diffs: new LruCache(1000, (v) => roughBytes(v), b.diffs.total, b.diffs.entry, budget),
  };
}

/**
 * A Map that forgets its least recently used entries beyond `limit` entries or, when `weigh` is given,
 * beyond `maxWeight` in total; an entry heavier than `maxEntryWeight` is never stored. With a shared
 * `budget`, entries are also dropped when the budget needs room (whichever cache used it least recently).
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, { value: V; weight: number; slot: BudgetSlot | null }>();
  private total = 0;
  constructor(
    private readonly limit: number,
    private readonly weigh?: (value: V) => number,
    private readonly maxWeight = Infinity,
    private readonly maxEntryWeight = maxWeight,
    private readonly budget?: CacheBudget,
  ) {}

  get(key: K): V | undefined {
    const slot = this.map.get(key);
    if (slot !== undefined) {
      this.map.delete(key);
      this.map.set(key, slot);
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
      const slot: BudgetSlot = { evict: () => this.map.get(key) === entry && this.delete(key) };
      // Counted as the budget sees it (at least a small header per entry): a cache of tiny entries is no free ride.
      if (!this.budget.charge(slot, Math.max(weight, 64))) return;
      entry.slot = slot;
    }
    this.map.set(key, entry);
    this.total += weight;
    while (this.map.size > this.limit || this.total > this.maxWeight) this.delete(this.map.keys().next().value as K);
  }

  /** Estimated bytes held. */
  get weight(): number {
    return this.total;
  }

  get size(): number {
    return this.map.size;
  }

  private delete(key: K): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.map.delete(key);
    this.total -= old.weight;
    if (old.slot) this.budget!.release(old.slot);
  }
}

/** A blob's text, cached by oid ('' for a missing side). */
export async function textOf(ctx: AuditContext, oid: string | null): Promise<string> {
  if (!oid) return '';
  const cached = ctx.texts.get(oid);
  if (cached !== undefined) return cached;
  const text = await blobText(ctx.store.objects, oid);
  ctx.texts.set(oid, text);
  return text;
}

export async function sizeOf(ctx: AuditContext, oid: string): Promise<number> {
  let size = ctx.sizes.get(oid);
  if (size === undefined) {
    size = (await ctx.store.objects.readBlob(oid)).byteLength;
    ctx.sizes.set(oid, size);
  }
  return size;
}

/** The entry a point names (tool_use id, commit or prefix, HEAD~N, ISO time: store/points.ts; `kind` restricts it to commits or calls), or HEAD when none is given. */
export async function entryFor(ctx: AuditContext, ref: string | undefined, kind: RefKind = 'any'): Promise<HistoryEntry> {
  if (ref === undefined || ref === '') {
    const head = ctx.store.history.head;
    if (!head) throw new NotFound('the store has no commits');
    return head;
  }
  try {
    return kind === 'any' ? await ctx.store.resolvePoint(ref) : await ctx.store.resolve(ref, kind);
  } catch (error) {
    if (error instanceof AmbiguousRefError || error instanceof InvalidPointError || error instanceof AmbiguousPointError) {
      throw new BadRequest(error.message.replace(/^memgit: /, ''));
    }
    if (error instanceof CommitNotFoundError) {
      if (kind === 'any') throw new NotFound(error.message.replace(/^memgit: /, ''));
      const what = kind === 'commit' ? 'commit' : 'call with tool_use id';
      throw new NotFound(`no ${what} ${JSON.stringify(ref)} in this store`);
    }
    throw error;
  }
}

/** A memory path relative to /memories ('' = the root) as a repository path. */
export function repoPathOf(rel: string): string {
  return rel === '' ? MEMORY_ROOT : `${MEMORY_ROOT}/${rel}`;
}

/**
 * A history entry in the shape every page and JSON twin shows: the commit record (src/history/records.ts,
 * docs/records.md) plus its position in history.
 */
export type CommitSummary = CommitRecord & { position: number };

export function summarise(ctx: AuditContext, entry: HistoryEntry): CommitSummary {
  return { ...commitRecord(entry), position: ctx.store.history.position(entry.commit) ?? -1 };
}

/** The error services throw for a missing commit, file, session or directory: pages answer 404. */
export class NotFound extends Error {}

/** The error services throw for a malformed query parameter: pages answer 400. */
export class BadRequest extends Error {}
