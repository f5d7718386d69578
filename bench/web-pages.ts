/**
 * Server time of the audit UI's heaviest read pages on a large store: the commits page (first and a deep
 * page, and a filtered one), a session page, a file page with blame of a file with 500+ revisions, and
 * the file's history. Builds (and caches under bench/.cache/) a store of COMMITS calls through memgit's
 * own write path with fsync off, then times each page over loopback HTTP.
 *
 *   node dist/bench/web-pages.js [commits=10000]       build (or reuse) bench/.cache/web-<commits>
 *   node dist/bench/web-pages.js --store DIR           time the pages of an existing store (e.g. one of
 *                                                      npm run bench's fast-import stores, copied)
 *   node dist/bench/web-pages.js --hostile             the hostile store of issue 19 (bench/hostile-pages.ts:
 *                                                      a 524,287-line file over 60 revisions, 50 files of
 *                                                      zero-width spaces in one session, an id spelling a
 *                                                      commit id): each heavy page's time and size, the worst
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../src/store/memory-store';
import { startServer } from '../src/web/server';
import { hostilePages, renderHostilePages } from './hostile-pages';

const HOSTILE = process.argv.includes('--hostile');
const storeArg = process.argv.indexOf('--store');
const EXISTING = storeArg === -1 ? null : path.resolve(process.argv[storeArg + 1]);
const COMMITS = EXISTING ? 0 : Number(process.argv[2] ?? 10_000);
const SESSION_CALLS = 100;
const FILES = 200;
const HOT_EVERY = Math.max(1, Math.floor(COMMITS / 520));
const dir = EXISTING ?? path.resolve(__dirname, '../../bench/.cache', `web-${COMMITS}`);

async function build(): Promise<MemoryStore> {
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  const start = store.history.size - 1;
  if (EXISTING || start >= COMMITS) return store;
  const began = Date.now();
  for (let i = start; i < COMMITS; i++) {
    const session = `sess_bench_${String(Math.floor(i / SESSION_CALLS)).padStart(5, '0')}`;
    const hot = i % HOT_EVERY === 0;
    const file = hot ? '/memories/hot.md' : `/memories/topic-${i % 10}/file-${i % FILES}.md`;
    const input = i < FILES || (hot && i === 0)
      ? { command: 'create', path: file, file_text: `# ${file}\n` + Array.from({ length: 20 }, (_, k) => `line ${k} of ${file}`).join('\n') + '\n' }
      : { command: 'insert', path: file, insert_line: 1 + (i % 15), insert_text: `call ${i}: remembered fact number ${i}` };
    const id = `toolu_bench_${String(i).padStart(7, '0')}`;
    const result = await store.execute({ type: 'tool_use', id, name: 'memory', input }, { session });
    if (result.is_error) {
      // the first touch of a hot or regular file after the create phase: create it
      await store.execute({ type: 'tool_use', id: `${id}_c`, name: 'memory', input: { command: 'create', path: file, file_text: 'start\n' } }, { session });
    }
    if (i % 1000 === 0) process.stderr.write(`built ${i}/${COMMITS} (${((Date.now() - began) / 1000).toFixed(0)} s)\n`);
  }
  return store;
}

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return `median ${q(0.5).toFixed(1)} ms · p95 ${q(0.95).toFixed(1)} ms · min ${sorted[0].toFixed(1)} · max ${sorted[sorted.length - 1].toFixed(1)}`;
}

async function hostile(): Promise<void> {
  const result = await hostilePages({ cacheDir: path.resolve(__dirname, '../../bench/.cache'), log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(renderHostilePages(result) + '\n');
}

async function main(): Promise<void> {
  if (HOSTILE) return hostile();
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const store = await build();
  const server = await startServer({ store, port: 0 });
  const history = store.history;
  // The file with the most revisions is the blame case; its directory the path-prefix filter.
  const hotPath = history.paths().reduce((a, b) => (history.byPath(b).length > history.byPath(a).length ? b : a));
  const hotRel = hotPath.replace(/^memories\//, '');
  const hotDir = path.posix.dirname(hotRel) === '.' ? '' : path.posix.dirname(hotRel);
  const hotRevisions = history.byPath(hotPath).length;
  const middle = history.at(Math.floor(history.size / 2))!;
  const session = middle.session!;
  const pages: [string, string][] = [
    ['commits page (newest)', '/commits'],
    ['commits page (deep cursor)', `/commits?before=${history.at(50)!.commit}`],
    ['commits page (session filter)', `/commits?session=${session}`],
    ['commits page (path prefix filter)', `/commits?path=/memories/${hotDir}`],
    [`session page (${history.bySession(session).length} calls)`, `/sessions/${session}`],
    [`file page + blame (${hotRevisions} revisions)`, `/files/${hotRel}`],
    ['file page + blame at an older commit', `/files/${hotRel}?at=${middle.commit}`],
    ['file history + blame, JSON', `/api/files/${hotRel}`],
    ['commit page', `/commits/${middle.commit}`],
    ['tree at an old commit', `/tree?at=${history.at(300)!.commit}&dir=${hotDir}`],
    ['overview', '/'],
    ['"which call introduced" (bounded scan)', '/commits?text=no%20such%20text%20anywhere'],
  ];
  process.stdout.write(`store: ${history.size} commits, ${history.sessions().length} sessions, ${history.paths().length} paths; ${hotRel} ${hotRevisions} revisions\n`);
  for (const [name, url] of pages) {
    const first = await time(server.url + url);
    const warm: number[] = [];
    for (let k = 0; k < 15; k++) warm.push(await time(server.url + url));
    process.stdout.write(`${name.padEnd(44)} first ${first.toFixed(1)} ms · warm ${stats(warm)}\n`);
  }
  await server.close();
  await store.close();
}

async function time(url: string): Promise<number> {
  const began = process.hrtime.bigint();
  const res = await fetch(url, { headers: { host: '127.0.0.1' } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return Number(process.hrtime.bigint() - began) / 1e6;
}

void main();
