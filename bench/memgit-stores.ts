/**
 * Stores as memgit leaves them, beside a store as a git host would hand it over (bench/generate.ts's three
 * packings of the same history): per size and packing, the cold open (time and peak RSS, in a process of
 * its own), `memgit serve`'s peak RSS serving the audit UI's heavy pages, and `.git/objects` on disk
 * after packing, per 1,000 calls. Each figure is judged against its target (set at 100,000 commits).
 *
 * Alone: `node dist/bench/memgit-stores.js 10000,30000` (stores are generated once under bench/.cache/).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../src/store/memory-store';
import { ensureStore, GeneratedFacts, generatedFacts, Packing, PACKINGS, variantDir } from './generate';
import { servedPages, ServeMemory, serveMemory } from './serve-memory';
import { RECOMMENDED_NODE_OPTIONS } from '../src/cli/heap';
import { mb, ms, table } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');

export const PACKING_NAMES: Record<Packing, string> = {
  'memgit-git': 'memgit gc, git engine (default when git is installed)',
  'memgit-isomorphic-git': 'memgit gc, isomorphic-git engine (fallback without git)',
  'git-packed': 'git-packed (git fast-import, deltas: a clone from a git host)',
};

export interface ColdOpen {
  ms: number;
  cpuMs: number;
  peakMb: number;
  baseMb: number;
}

export interface StoreFigures {
  packing: Packing;
  cold: ColdOpen;
  serve: ServeMemory;
  /** The same with the recommended NODE_OPTIONS (src/cli/heap.ts). */
  serveTuned: ServeMemory;
  objectsBytes: number;
}

export interface SizeResult {
  commits: number;
  files: number;
  facts: GeneratedFacts;
  stores: StoreFigures[];
  /** The machine's load average (1, 5, 15 min) when this size's figures were taken. */
  load: number[];
}

export const TARGET_AT = 100_000;
const COLD_TARGET_MS = 30_000;
const SERVE_TARGET_MB = 300;
const DISK_TARGET_PER_1000 = 1024 * 1024;

export async function benchMemgitStores(cacheDir: string, sizes: number[], files: number, log: (line: string) => void): Promise<SizeResult[]> {
  const results: SizeResult[] = [];
  for (const commits of sizes) {
    const dir = path.join(cacheDir, `store-${commits}-${files}`);
    log(`memgit-written stores: ${commits} commits × ${files} files`);
    await ensureStore(dir, commits, files, log);
    const facts = generatedFacts(dir);
    if (!facts) throw new Error(`${dir}: no generation facts (a store cached before bench/generate.ts recorded them: remove ${dir}.complete)`);
    const stores: StoreFigures[] = [];
    for (const packing of PACKINGS) {
      const source = variantDir(dir, packing);
      const cold = coldOpen(source);
      log(`  ${packing}: cold open ${ms(cold.ms)} (CPU ${ms(cold.cpuMs)}), peak ${cold.peakMb.toFixed(0)} MB`);
      const opened = await MemoryStore.open(source, { log: () => undefined, autoGcLooseObjects: 0 });
      const pages = servedPages(opened, commits, files);
      await opened.close();
      const serve = await serveMemory(source, pages);
      const serveTuned = await serveMemory(source, pages, RECOMMENDED_NODE_OPTIONS);
      log(`  ${packing}: memgit serve peak ${serve.peakMb.toFixed(0)} MB (${serveTuned.peakMb.toFixed(0)} MB with NODE_OPTIONS=${RECOMMENDED_NODE_OPTIONS})`);
      stores.push({ packing, cold, serve, serveTuned, objectsBytes: facts.packed[packing]!.bytes });
    }
    results.push({ commits, files, facts, stores, load: os.loadavg() });
  }
  return results;
}

/** A cold open of a copy of `source` without .git/memgit/, in a process of its own (bench/cold-open.ts). */
function coldOpen(source: string): ColdOpen {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-bench-cold-'));
  try {
    const copy = spawnSync('cp', ['-a', `${source}/.`, work]);
    if (copy.status !== 0) throw new Error(`cp -a ${source}: ${copy.stderr}`);
    fs.rmSync(path.join(work, '.git', 'memgit'), { recursive: true, force: true });
    spawnSync('sync', [], { stdio: 'ignore' });
    const run = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'bench', 'cold-open.js'), work], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    if (run.status !== 0) throw new Error(`cold open of ${source}: ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split('\n').pop()!) as ColdOpen;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const count = (n: number) => n.toLocaleString('en-US');
const per1000 = (bytes: number, calls: number) => (bytes * 1000) / calls;

export function renderMemgitStores(results: SizeResult[]): string[] {
  if (results.length === 0) return [];
  const out: string[] = [
    '## Stores as memgit writes them, and as a git host hands them over',
    '',
    'The same history three ways (bench/generate.ts; the generator checks the three HEADs are one commit): every object written loose by ' +
      "memgit's own object writer (src/store/loose-object.ts, the bytes a call writes; without fsync, setup only) and then packed by " +
      '`memgit gc` (full) with each of its engines, and the history imported with `git fast-import` into a pack with deltas (depth 50), as a ' +
      "clone from a git host arrives. The read side above runs on the first (memgit's gc with git). Cold open: `MemoryStore.open` of a copy " +
      'without `.git/memgit/` (history index rebuilt from git), in a process of its own; peak RSS is that process\'s own VmHWM. `memgit serve`: the ' +
      'CLI serving the audit UI\'s heavy pages three times each, its VmHWM. Disk: `du` of `.git/objects`.',
    '',
  ];
  for (const r of results) {
    out.push(
      `**${count(r.commits)} commits × ${count(r.files)} files** (all objects loose before gc: ${mb(r.facts.looseBytes)}, ` +
        `${mb(per1000(r.facts.looseBytes, r.commits))} per 1,000 calls; load average after these figures: ${r.load.map((l) => l.toFixed(1)).join(', ')} on ${os.cpus().length} cores)`,
      '',
    );
    out.push(
      table(
        ['packing', 'cold open', 'cold open, CPU time', 'cold open, peak RSS', '`memgit serve` RSS once serving', '`memgit serve` peak RSS', `peak RSS with NODE_OPTIONS=${RECOMMENDED_NODE_OPTIONS}`, '.git/objects', 'per 1,000 calls', 'packing time'],
        r.stores.map((s) => {
          const packed = r.facts.packed[s.packing]!;
          return [
            PACKING_NAMES[s.packing],
            ms(s.cold.ms),
            ms(s.cold.cpuMs),
            `${s.cold.peakMb.toFixed(0)} MB`,
            `${s.serve.openedMb.toFixed(0)} MB`,
            `${s.serve.peakMb.toFixed(0)} MB`,
            `${s.serveTuned.peakMb.toFixed(0)} MB`,
            mb(s.objectsBytes),
            mb(per1000(s.objectsBytes, r.commits)),
            s.packing === 'git-packed' ? `${ms(packed.packMs)} (fast-import)` : ms(packed.packMs),
          ];
        }),
      ),
      '',
    );
  }
  return out;
}

/** Each figure at 100,000 commits against its target; measured, or extrapolated (and marked so) from the two largest sizes. */
export function memgitStoreTargets(results: SizeResult[]): string[] {
  if (results.length === 0) return ['- Stores as memgit writes them: not measured in this run.'];
  const sorted = [...results].sort((a, b) => a.commits - b.commits);
  const top = sorted[sorted.length - 1];
  const measured = top.commits >= TARGET_AT;
  const prev = sorted.length > 1 ? sorted[sorted.length - 2] : null;
  /** The figure at 100,000: measured, or a straight line through the two largest sizes (one size: its own figure). */
  const at100k = (pick: (r: SizeResult) => number): number => {
    if (measured || !prev) return pick(top);
    const slope = (pick(top) - pick(prev)) / (top.commits - prev.commits);
    return pick(top) + slope * (TARGET_AT - top.commits);
  };
  const how = measured
    ? `measured at ${count(top.commits)} commits`
    : !prev
      ? `measured at ${count(top.commits)} commits only (the targets are set at 100,000; one size is not extrapolated)`
      : `**extrapolated** to 100,000 commits on a straight line through ${prev ? `${count(prev.commits)} and ` : ''}${count(top.commits)} commits (100,000 was not run)`;
  const lines: string[] = [];
  const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
  for (const packing of PACKINGS) {
    const fig = (r: SizeResult) => r.stores.find((s) => s.packing === packing)!;
    const cold = at100k((r) => fig(r).cold.ms);
    const coldCpu = at100k((r) => fig(r).cold.cpuMs);
    const coldPeak = at100k((r) => fig(r).cold.peakMb);
    const serve = at100k((r) => fig(r).serve.peakMb);
    const serveTuned = at100k((r) => fig(r).serveTuned.peakMb);
    const disk = at100k((r) => per1000(fig(r).objectsBytes, r.commits));
    lines.push(
      `- ${PACKING_NAMES[packing]}, ${how}: cold open ${ms(cold)} (target ≤ 30 s): ${verdict(cold <= COLD_TARGET_MS)}, of which ${ms(coldCpu)} CPU time (about what an idle machine would take: ${verdict(coldCpu <= COLD_TARGET_MS)} on that measure), peak ${coldPeak.toFixed(0)} MB; ` +
        `\`memgit serve\` peak ${serve.toFixed(0)} MB (target ≤ 300 MB): ${verdict(serve <= SERVE_TARGET_MB)}, ` +
        `${serveTuned.toFixed(0)} MB with NODE_OPTIONS=${RECOMMENDED_NODE_OPTIONS}: ${verdict(serveTuned <= SERVE_TARGET_MB)}; ` +
        `disk ${mb(disk)} per 1,000 calls (target ≤ 1 MB): ${verdict(disk <= DISK_TARGET_PER_1000)}.`,
    );
    const why: string[] = [];
    if (cold > COLD_TARGET_MS) {
      why.push(
        'the cold open reads every commit and the trees along its changed path once (about 4 objects per call), each through ' +
          "isomorphic-git's reader of packed objects (GitPackIndex.read, called directly once the pack is loaded) — the inflate (node:zlib, " +
          'src/store/native-inflate.ts) and, in a pack with deltas, the delta chain behind each tree — and diffs the trees ' +
          '(src/store/raw-tree-diff.ts: only the entries two trees do not share are walked); isomorphic-git turns the pack index into ' +
          'a Map of hex ids when the pack is first read (made a compact table at once: src/store/pack-offsets.ts); the rest is garbage ' +
          'collection; the wall time beyond the CPU ' +
          'time is the shared machine\'s load (its load average is beside each size)',
      );
    }
    if (serve > SERVE_TARGET_MB) {
      why.push(
        (packing === 'git-packed'
          ? 'git fast-import stores each new version of an object as a delta against the one before it, so the newest versions, which the ' +
            'pages read, are at the end of delta chains up to 50 deep (git pack-objects, which memgit gc runs, stores the newest whole and ' +
            'the older ones as deltas): a page inflates and applies whole chains of bases, each one garbage once read or a bounded ' +
            `cache entry, young-generation churn that NODE_OPTIONS=${RECOMMENDED_NODE_OPTIONS} bounds (${serveTuned.toFixed(0)} MB with it); besides, `
          : '') +
        'once a page reads git, the pack index is held (its ids as a compact table, 24 bytes an object: src/store/pack-offsets.ts; the ' +
          `pack itself, ${mb(at100k((r) => r.facts.packed[packing]!.bytes))} here, is read by position, not held: src/store/pack-by-position.ts); ` +
          'memgit adds the history index (its snapshot\'s tables and the entries pages parse; the lines themselves are read by position, ' +
          'not held) and its bounded caches of trees, blobs and inflated packed objects (`memgit serve --cache-size`, 64 MiB by default)',
      );
    }
    if (disk > DISK_TARGET_PER_1000) {
      why.push(
        packing === 'memgit-isomorphic-git'
          ? "isomorphic-git's packObjects stores every object whole (no deltas), and every call adds a new version of the three trees on its " +
              'path, mostly incompressible SHA-1s; git stores those trees as deltas'
          : 'the pack holds a new version of the three trees on every call\'s path',
      );
    }
    if (why.length) lines.push(`  Why it misses: ${why.join('; ')}.`);
  }
  return lines;
}

if (require.main === module) {
  // Alone, the figures of each size are kept in bench/.cache/memgit-stores.json, and the report covers every
  // size kept there (each size's row says its load average; a later run of a size replaces it).
  const sizes = (process.argv[2] ?? '10000').split(',').map(Number);
  const files = Number(process.argv[3] ?? '1000');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const kept = path.join(ROOT, 'bench', '.cache', 'memgit-stores.json');
  if (process.argv[2] === '--render') {
    // The report of the figures kept, without measuring anything.
    const all = JSON.parse(fs.readFileSync(kept, 'utf8')) as SizeResult[];
    process.stdout.write([...renderMemgitStores(all), '', ...memgitStoreTargets(all)].join('\n') + '\n');
    process.exit(0);
  }
  benchMemgitStores(path.join(ROOT, 'bench', '.cache'), sizes, files, log)
    .then((results) => {
      let all: SizeResult[] = [];
      try {
        all = JSON.parse(fs.readFileSync(kept, 'utf8')) as SizeResult[];
      } catch {
        all = [];
      }
      all = all.filter((r) => !results.some((n) => n.commits === r.commits && n.files === r.files)).concat(results);
      all.sort((a, b) => a.commits - b.commits);
      fs.writeFileSync(kept, JSON.stringify(all, null, 1));
      process.stdout.write([...renderMemgitStores(all), ...memgitStoreTargets(all)].join('\n') + '\n');
    })
    .catch((error: Error) => {
      process.stderr.write(`bench/memgit-stores failed: ${error.stack ?? error}\n`);
      process.exit(1);
    });
}
