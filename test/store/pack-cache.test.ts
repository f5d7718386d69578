/**
 * The bounded cache of packed objects (src/store/pack-cache.ts) that ObjectStore installs into the pack
 * indexes isomorphic-git loads, and the history index a cold open rebuilds through it from a store that
 * the real git CLI repacked with deep delta chains: entry for entry the index written call by call, each
 * packed object inflated at most once, every blob equal to what `git cat-file` gives.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HistoryEntry } from '../../src/store/history-index';
import { MemoryStore } from '../../src/store/memory-store';
import { CacheBudget } from '../../src/store/cache-budget';
import { boundedOffsetCache, CACHED_OBJECT_OVERHEAD } from '../../src/store/pack-cache';
import { mixedWorkload, QUIET, useTempDir } from './git-helpers';

// The very module isomorphic-git inflates with (one module registry per test file).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pako = require('pako') as { inflate: (data: Uint8Array) => Uint8Array };

const tempDir = useTempDir();

function git(dir: string, ...args: string[]): string {
  const run = spawnSync('git', args, { cwd: dir, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

const slice = (n: number) => ({ type: 'blob', object: new Uint8Array(n) });

describe('boundedOffsetCache', () => {
  // Each entry counts its bytes and what an entry costs beyond them.
  const w = (n: number) => n + CACHED_OBJECT_OVERHEAD;

  it('keeps the most recently used objects up to its byte budget', () => {
    const cache = boundedOffsetCache(2 * w(0) + 110);
    cache['10'] = slice(40);
    cache['20'] = slice(40);
    expect(cache['10']?.object.byteLength).toBe(40); // 10 is now the most recently used
    cache['30'] = slice(40); // over budget: the least recently used (20) goes
    expect('20' in cache).toBe(false);
    expect(cache['20']).toBeUndefined();
    expect(['10' in cache, '30' in cache]).toEqual([true, true]);
    cache['40'] = slice(2 * w(0) + 111); // larger than the whole budget: not kept, nothing evicted for it
    expect('40' in cache).toBe(false);
    expect(['10' in cache, '30' in cache]).toEqual([true, true]);
    cache['30'] = slice(60); // replacing an entry accounts for the old size: 40 + 60 fits
    expect(['10' in cache, '30' in cache]).toEqual([true, true]);
    cache['50'] = slice(1); // 101 bytes and three entries: the oldest (10) goes
    expect(['10' in cache, '30' in cache, '50' in cache]).toEqual([false, true, true]);
  });

  it('keeps its own copy of an object that is a view into a larger buffer (a pool slab pins 8 KB), counted with its overhead', () => {
    const budget = new CacheBudget(1024 * 1024);
    const cache = boundedOffsetCache(1024 * 1024, budget);
    const pooled = Buffer.from(Buffer.from('tree bytes of a small tree object')); // Node's pool: a view into a slab
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength);
    cache['7'] = { type: 'tree', object: pooled };
    const kept = cache['7']!.object;
    expect(Buffer.isBuffer(kept)).toBe(true); // isomorphic-git calls Buffer methods on what its cache returns
    expect(kept.buffer.byteLength).toBe(pooled.byteLength);
    expect(Buffer.compare(kept as Buffer, pooled)).toBe(0);
    expect(budget.used).toBe(w(pooled.byteLength));
    const own = Buffer.allocUnsafeSlow(100).fill(1); // owns its memory: kept as it is
    cache['8'] = { type: 'blob', object: own };
    expect(cache['8']!.object).toBe(own);
    expect(budget.used).toBe(w(pooled.byteLength) + w(100));
  });

  it('ignores what is not a slice result, and deletes', () => {
    const cache = boundedOffsetCache(100) as Record<string, unknown>;
    cache['1'] = 'not an object';
    cache['2'] = { type: 'blob' };
    expect(['1' in cache, '2' in cache]).toEqual([false, false]);
    cache['3'] = slice(10);
    delete cache['3'];
    expect(cache['3']).toBeUndefined();
  });
});

/** An entry as a cold open can know it: facts are computed later, from the blobs. */
function withoutFacts(entry: HistoryEntry): Omit<HistoryEntry, 'facts'> {
  const { facts: _facts, ...rest } = entry;
  return rest;
}

test('a cold open of a store repacked by git (delta chains) rebuilds the index written call by call, inflating each packed object at most once', async () => {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, QUIET);
  await mixedWorkload(store, 160);
  const written = store.history.all().map(withoutFacts);
  await store.close();
  expect(new Set(written.map((e) => e.command))).toEqual(new Set(['create', 'str_replace', 'rename', 'delete', undefined]));

  // A clone would come packed: everything in one pack with deep delta chains, no loose objects, no index.
  git(dir, 'repack', '-a', '-d', '-f', '--depth=50', '--window=250', '-q');
  git(dir, 'prune-packed');
  fs.rmSync(path.join(dir, '.git', 'memgit'), { recursive: true, force: true });
  const packs = fs.readdirSync(path.join(dir, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.idx'));
  expect(packs).toHaveLength(1);
  const verify = git(dir, 'verify-pack', '-v', path.join('.git', 'objects', 'pack', packs[0]));
  const packed = verify.split('\n').filter((line) => /^[0-9a-f]{40} (commit|tree|blob|tag) /.test(line));
  const depths = packed.map((line) => Number(line.split(/\s+/)[5] ?? 0));
  expect(Math.max(...depths)).toBeGreaterThan(3); // chains: re-reading one without the cache inflates every link

  const inflate = pako.inflate;
  let inflates = 0;
  pako.inflate = (data: Uint8Array) => {
    inflates++;
    return inflate(data);
  };
  let cold: MemoryStore;
  try {
    cold = await MemoryStore.open(dir, QUIET);
  } finally {
    pako.inflate = inflate;
  }
  try {
    expect(cold.history.all().map(withoutFacts)).toEqual(written);
    expect(inflates).toBeGreaterThan(0);
    expect(inflates).toBeLessThanOrEqual(packed.length);
    // Most reads went straight to the pack index isomorphic-git had loaded (ObjectStore.readPackedDirect):
    // the first ones load it through isomorphic-git's own entry point.
    expect(cold.objects.directReads.direct).toBeGreaterThan(written.length);

    // The pack index isomorphic-git loaded got the cache: objects it hands out (shared) are right.
    const head = written[written.length - 1];
    for (const live of cold.history.liveFiles()) {
      const bytes = await cold.objects.readBlob(live.oid);
      expect({ path: live.path, text: Buffer.from(bytes).toString('utf8') }).toEqual({ path: live.path, text: git(dir, 'cat-file', 'blob', live.oid) });
      expect(git(dir, 'rev-parse', `${head.commit}:${live.path}`).trim()).toBe(live.oid);
    }
  } finally {
    await cold.close();
  }
});
