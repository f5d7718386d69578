/**
 * The audit UI under hostile load (issue 19), for docs/benchmarks.md: the heaviest pages of the hostile
 * stores, timed over loopback HTTP against the real server (in this process, with the rollback routes),
 * with their response sizes and the worst of each. The stores are those of test/web/hostile-stores.ts,
 * larger: a 1 MiB file of 524,287 lines changed one line per revision (60 revisions), 50 files of
 * 349,000 zero-width spaces in one session, and a call whose tool_use id spells another call's commit
 * id (written as an older memgit would have). Built once under `cacheDir` (through the memory tool,
 * fsync off; about a minute), then reused.
 *
 *   node dist/bench/hostile-pages.js [--reps=5]      (or: node dist/bench/web-pages.js --hostile)
 *
 * `npm run bench` can call `hostilePages({ cacheDir, log })` and print `renderHostilePages(result)`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../src/store/memory-store';
import { rollbackRoutes } from '../src/web/routes/operator';
import { startServer } from '../src/web/server';
import { addBigFile, addZeroWidthFiles, BIG_LINES, BIG_SESSION, forgeCall, ZERO_WIDTH_SESSION } from '../test/web/hostile-stores';
import { now } from './stats';

export interface HostilePagesOptions {
  /** Where the store is built once and kept (npm run bench: bench/.cache). */
  cacheDir: string;
  /** Warm requests per page after the first (cold) one; the median of these is reported. Default 5. */
  reps?: number;
  /** Revisions of the big file (default 60) and zero-width files (default 50). */
  revisions?: number;
  zeroWidthFiles?: number;
  log?: (message: string) => void;
}

export interface HostilePage {
  /** What the page is, in words, and the URL asked for. */
  name: string;
  url: string;
  status: number;
  /** Milliseconds of the first request (cold caches) and the median of the warm ones. */
  firstMs: number;
  medianMs: number;
  /** Bytes of the response body (the largest of the requests, which are all the same page). */
  bytes: number;
}

export interface HostilePagesResult {
  store: { dir: string; revisions: number; zeroWidthFiles: number; bigLines: number; commits: number };
  reps: number;
  pages: HostilePage[];
  /** The page with the largest median time, and the one with the largest response. */
  worstTime: HostilePage;
  worstSize: HostilePage;
  /** Peak resident memory of this process (server and client together), from /proc/self/status. */
  peakMemoryMb: number | null;
}

const TOKEN = 'hostile-pages-bench-operator-token-5e1f0a93';
const VICTIM_ID = 'toolu_victim';

/** Build (once) the hostile store; returns its directory. */
async function ensureHostileStore(options: Required<Pick<HostilePagesOptions, 'cacheDir' | 'revisions' | 'zeroWidthFiles'>>, log: (m: string) => void): Promise<string> {
  const dir = path.join(options.cacheDir, `web-hostile-${options.revisions}-${options.zeroWidthFiles}`);
  const done = `${dir}.complete`;
  if (fs.existsSync(done)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const began = now();
  log(`  building ${dir} (a ${BIG_LINES}-line file over ${options.revisions} revisions, ${options.zeroWidthFiles} zero-width files, an id spelling a commit id)…`);
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  await addBigFile(store, options.revisions);
  await addZeroWidthFiles(store, options.zeroWidthFiles);
  const report = await store.executeWithReport(
    { type: 'tool_use', id: VICTIM_ID, name: 'memory', input: { command: 'create', path: '/memories/victim.md', file_text: 'the real call\n' } },
    { session: 'sess_victim' },
  );
  await store.close();
  await forgeCall(dir, report.commit!, 'sess_old_memgit');
  fs.writeFileSync(done, '');
  log(`  built in ${((now() - began) / 1000).toFixed(0)} s`);
  return dir;
}

/** Log in as the operator over HTTP (CSRF cookie and field, then the session cookie), for the HTML previews. */
async function operatorCookie(base: string): Promise<string> {
  const cookies = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const page = await fetch(`${base}/login`);
  keep(page);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error('hostile-pages: no CSRF field on /login');
  const login = await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: header(), origin: base, 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ operator: 'bench', token: TOKEN, _csrf: csrf }).toString(),
  });
  if (login.status !== 303) throw new Error(`hostile-pages: operator login answered ${login.status}`);
  keep(login);
  return header();
}

async function timeAndSize(url: string, headers: Record<string, string>): Promise<{ ms: number; bytes: number; status: number }> {
  const began = now();
  const res = await fetch(url, { headers, redirect: 'manual' });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { ms: now() - began, bytes, status: res.status };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Time every heavy page of the hostile store: one cold request, then `reps` warm ones (median), each
 * page's response size, and the worst page by time and by size.
 */
export async function hostilePages(options: HostilePagesOptions): Promise<HostilePagesResult> {
  const log = options.log ?? (() => undefined);
  const reps = options.reps ?? 5;
  const revisions = options.revisions ?? 60;
  const zeroWidthFiles = options.zeroWidthFiles ?? 50;
  const dir = await ensureHostileStore({ cacheDir: options.cacheDir, revisions, zeroWidthFiles }, log);
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined, replicate: false, flags: false });
  const server = await startServer({ store, port: 0, log: () => undefined, routes: [rollbackRoutes({ token: TOKEN })] });
  try {
    const history = store.history;
    const victim = history.byToolUseId(VICTIM_ID)!.commit;
    const first = history.at(0)!.commit;
    const zwCommit = history.byToolUseId('toolu_zw_000')!.commit;
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const cookie = { cookie: await operatorCookie(server.url) };
    const pages: [string, string, Record<string, string>?][] = [
      ['file page of the big file (blame over budget)', '/files/big.md'],
      ['file page of the big file at its 6th revision (blamed)', '/files/big.md?at=toolu_big_005'],
      ['file history of the big file, JSON', '/api/files/big.md?blame=0'],
      [`session of ${revisions} one-line changes of the big file`, `/sessions/${BIG_SESSION}`],
      [`session of ${zeroWidthFiles} zero-width files, side by side`, `/sessions/${ZERO_WIDTH_SESSION}?view=split`],
      ['same session, JSON', `/api/sessions/${ZERO_WIDTH_SESSION}`],
      ['a zero-width file', '/files/zw/f000.md'],
      ['commit of a zero-width file', `/commits/${zwCommit}`],
      ['search "a"', '/search?q=a'],
      ['search U+200B', '/search?q=%E2%80%8B'],
      ['commits whose diff introduced "m1"', '/commits?text=m1'],
      ['the commit an id spells (/commits/<sha>)', `/commits/${victim}`],
      ['the impostor call (/calls/<id>)', `/calls/${victim}`],
      ['an ambiguous ref (refused with the candidates, 400)', `/files/victim.md?at=${victim}`],
      ['reset preview to the first commit, JSON', `/api/rollback/reset?to=commit:${first}`, bearer],
      ['reset preview to the first commit, page', `/rollback/reset?to=commit:${first}`, cookie],
      ['zero-width session rollback preview, page', `/rollback/session?session=${ZERO_WIDTH_SESSION}`, cookie],
      ['revert preview on the big file (a conflict), JSON', '/api/rollback/revert?ref=toolu_big_003', bearer],
      ['overview (the light request)', '/'],
    ];
    const results: HostilePage[] = [];
    for (const [name, url, headers] of pages) {
      const cold = await timeAndSize(server.url + url, headers ?? {});
      const warm: number[] = [];
      let bytes = cold.bytes;
      for (let k = 0; k < reps; k++) {
        const r = await timeAndSize(server.url + url, headers ?? {});
        warm.push(r.ms);
        bytes = Math.max(bytes, r.bytes);
      }
      const page: HostilePage = { name, url, status: cold.status, firstMs: cold.ms, medianMs: median(warm.length ? warm : [cold.ms]), bytes };
      log(`  ${name}: ${page.status}, first ${page.firstMs.toFixed(0)} ms, median ${page.medianMs.toFixed(0)} ms, ${page.bytes} bytes`);
      results.push(page);
    }
    const heavy = results.filter((p) => p.url !== '/');
    const worstTime = heavy.reduce((a, b) => (b.medianMs > a.medianMs ? b : a));
    const worstSize = heavy.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const peak = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return {
      store: { dir, revisions, zeroWidthFiles, bigLines: BIG_LINES, commits: history.size },
      reps,
      pages: results,
      worstTime,
      worstSize,
      peakMemoryMb: peak ? Number(peak[1]) / 1024 : null,
    };
  } finally {
    await server.close();
    await store.close();
  }
}

/** The result as a section of docs/benchmarks.md. */
export function renderHostilePages(r: HostilePagesResult): string {
  const kb = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MB` : `${(bytes / 1024).toFixed(0)} KB`);
  return [
    '## The audit UI under hostile load',
    '',
    `The hostile store of issue 19 (${r.store.commits} commits): a ${r.store.bigLines.toLocaleString('en-US')}-line file changed one line per revision over ` +
      `${r.store.revisions} revisions, ${r.store.zeroWidthFiles} files of 349,000 zero-width spaces in one session, and a call whose tool_use id is another call's commit id. ` +
      `Each page over loopback HTTP: the first request (cold caches), then the median of ${r.reps} more; the response budget is 4 MiB.`,
    '',
    '| page | status | first | median | bytes |',
    '|---|---|---|---|---|',
    ...r.pages.map((p) => `| ${p.name} | ${p.status} | ${p.firstMs.toFixed(0)} ms | ${p.medianMs.toFixed(0)} ms | ${kb(p.bytes)} |`),
    '',
    `Worst page by time: ${r.worstTime.name} (median ${r.worstTime.medianMs.toFixed(0)} ms); by size: ${r.worstSize.name} (${kb(r.worstSize.bytes)}).` +
      (r.peakMemoryMb !== null ? ` Peak memory of the benchmark process (server and client): ${r.peakMemoryMb.toFixed(0)} MiB.` : ''),
    '',
  ].join('\n');
}

if (require.main === module) {
  const reps = Number(process.argv.find((a) => a.startsWith('--reps='))?.split('=')[1] ?? 5);
  hostilePages({ cacheDir: path.resolve(__dirname, '..', '..', 'bench', '.cache'), reps, log: (m) => process.stderr.write(`${m}\n`) })
    .then((r) => process.stdout.write(renderHostilePages(r) + '\n'))
    .catch((error) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
