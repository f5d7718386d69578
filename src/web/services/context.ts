import { blobText } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import type { MemoryStore } from '../../store/memory-store';
import { AmbiguousPointError, CommitNotFoundError, InvalidPointError } from '../../store/errors';
import { MEMORY_ROOT } from '../../store/git-reader';

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
  /** The sessions list, valid while history has this many entries. */
  sessionList?: { size: number; list: unknown };
}

export interface BlameState {
  lines: string[];
  /** For each line, the commit of the revision that wrote it. */
  origins: string[];
}

const TEXT_CACHE_CHARS = 64 * 1024 * 1024;

export function createAuditContext(store: MemoryStore): AuditContext {
  return {
    store,
    texts: new LruCache(20_000, (text: string) => text.length, TEXT_CACHE_CHARS),
    lineStats: new LruCache(50_000),
    blames: new LruCache(2000),
    sizes: new LruCache(100_000),
    diffs: new LruCache(1000),
  };
}

/**
 * A Map that forgets its least recently used entries beyond `limit` entries or, when `weigh` is given,
 * beyond `maxWeight` in total (blob texts are weighed by length, so big files cannot exhaust memory).
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  private weight = 0;
  constructor(
    private readonly limit: number,
    private readonly weigh?: (value: V) => number,
    private readonly maxWeight = Infinity,
  ) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weigh?.(value) ?? 0;
    if (weight > this.maxWeight) return;
    this.map.set(key, value);
    this.weight += weight;
    while (this.map.size > this.limit || this.weight > this.maxWeight) this.delete(this.map.keys().next().value as K);
  }

  private delete(key: K): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.map.delete(key);
    this.weight -= this.weigh?.(old) ?? 0;
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

/** The entry a point names (tool_use id, commit or prefix, HEAD~N, ISO time: store/points.ts), or HEAD when none is given. */
export async function entryFor(ctx: AuditContext, ref: string | undefined): Promise<HistoryEntry> {
  if (ref === undefined || ref === '') {
    const head = ctx.store.history.head;
    if (!head) throw new NotFound('the store has no commits');
    return head;
  }
  try {
    return await ctx.store.resolvePoint(ref);
  } catch (error) {
    if (error instanceof CommitNotFoundError) throw new NotFound(error.message.replace(/^memgit: /, ''));
    if (error instanceof InvalidPointError || error instanceof AmbiguousPointError) throw new BadRequest(error.message.replace(/^memgit: /, ''));
    throw error;
  }
}

/** A memory path relative to /memories ('' = the root) as a repository path. */
export function repoPathOf(rel: string): string {
  return rel === '' ? MEMORY_ROOT : `${MEMORY_ROOT}/${rel}`;
}

/** A history entry in the shape every page and JSON twin shows. */
export interface CommitSummary {
  commit: string;
  position: number;
  parent: string | null;
  toolUseId: string | null;
  title: string;
  session: string | null;
  command: string | null;
  path: string | null;
  newPath: string | null;
  actor: string | null;
  reverts: string[];
  reason: string | null;
  /** Seconds since the epoch. */
  time: number;
}

export function summarise(ctx: AuditContext, entry: HistoryEntry): CommitSummary {
  return {
    commit: entry.commit,
    position: ctx.store.history.position(entry.commit) ?? -1,
    parent: entry.parent,
    toolUseId: entry.toolUseId ?? null,
    title: entry.title,
    session: entry.session ?? null,
    command: entry.command ?? null,
    path: entry.path ?? null,
    newPath: entry.newPath ?? null,
    actor: entry.actor ?? null,
    reverts: entry.reverts ?? [],
    reason: entry.reason ?? null,
    time: entry.time,
  };
}

/** The error services throw for a missing commit, file, session or directory: pages answer 404. */
export class NotFound extends Error {}

/** The error services throw for a malformed query parameter: pages answer 400. */
export class BadRequest extends Error {}
