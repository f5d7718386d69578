import type { CacheBudget, MemoryStore } from '../store';
import { blobText } from '../store/history-index/file-diffs';
import type { BlameState } from '../store/history-index/blame-step';
import { blameStateBytes, HISTORY_CACHE_BUDGETS, LruCache, stringBytes } from './cache';

/**
 * What every question to the read model is asked in: the store, and the caches its answers share (blob
 * texts and sizes by oid, blame states by commit and path, and answers that hold until the history or the
 * call log changes). One context per open store, shared by every surface of a process — the UI's pages,
 * the HTTP read API, MCP, a CLI command — so that they read through the same caches.
 */
export interface HistoryContext {
  readonly store: MemoryStore;
  readonly texts: LruCache<string, string>;
  /** Blame state after a revision, keyed by `${commit}\0${repoPath}` (a commit fixes its whole chain). */
  readonly blames: LruCache<string, BlameState>;
  /** Blob sizes in bytes by oid. */
  readonly sizes: LruCache<string, number>;
  /** Answers valid while their version (e.g. `history size:call log version`) is unchanged, by name. */
  readonly memo: Map<string, { version: string; value: unknown }>;
}

const contexts = new WeakMap<MemoryStore, HistoryContext>();

/**
 * The read model's context of an open store (made on first use, and dropped with the store). Its caches
 * also count against the store's shared cache budget (`cacheBudget`, memgit server) or, for a store
 * without one, against `budget` when the first caller gives one.
 */
export function historyContext(store: MemoryStore, budget?: CacheBudget): HistoryContext {
  let ctx = contexts.get(store);
  if (!ctx) {
    const b = HISTORY_CACHE_BUDGETS;
    const shared = store.cacheBudget ?? budget;
    ctx = {
      store,
      texts: new LruCache(20_000, stringBytes, b.texts.total, b.texts.entry, shared),
      blames: new LruCache(2000, blameStateBytes, b.blames.total, b.blames.entry, shared),
      sizes: new LruCache(100_000, () => 80, b.sizes.total, b.sizes.entry, shared),
      memo: new Map(),
    };
    contexts.set(store, ctx);
  }
  return ctx;
}

/** A blob's text, cached by oid ('' for a missing side). */
export async function textOf(ctx: HistoryContext, oid: string | null): Promise<string> {
  if (!oid) return '';
  const cached = ctx.texts.get(oid);
  if (cached !== undefined) return cached;
  const text = await blobText(ctx.store.objects, oid);
  ctx.texts.set(oid, text);
  return text;
}

/** A blob's size in bytes, cached by oid. */
export async function sizeOf(ctx: HistoryContext, oid: string): Promise<number> {
  let size = ctx.sizes.get(oid);
  if (size === undefined) {
    size = (await ctx.store.objects.readBlob(oid)).byteLength;
    ctx.sizes.set(oid, size);
  }
  return size;
}

/** An answer remembered under `name` while `version` stays the same. */
export async function remembered<T>(ctx: HistoryContext, name: string, version: string, compute: () => Promise<T>): Promise<T> {
  const known = ctx.memo.get(name);
  if (known && known.version === version) return known.value as T;
  const value = await compute();
  ctx.memo.set(name, { version, value });
  return value;
}
