/**
 * The mixed-abuse run of issue 25, a section of `npm run bench` (and of `npm run stress`), also alone:
 *
 *   node dist/bench/abuse.js [--seconds=20] [--unfinished=40] [--cache-size=64mb]
 *
 * One `memgit server` (the built CLI, its own process) and two keys. The attacker's key, for T seconds and
 * all at once: requests whose bodies never finish (half to the tool API, half to MCP, each sent up to one
 * byte short of its Content-Length and then held), a flood of MCP `initialize` (sessions), a flood of store
 * creations, cache-heavy reads of its own stores of large files (commit and file pages), and the store list
 * at `/`. Meanwhile the victim's key makes ordinary calls — HTTP tool calls, a read-API call now and then,
 * and MCP tool calls on a session it keeps — each one timed.
 *
 * Reported: the victim's p50 / p99 and errors (anything but the expected answer, per kind), what the
 * attacker got (answers by status), the server's peak resident memory against the bound of its
 * configuration (the formula in docs/reliability.md, "Memory: the whole bound"), and whether the process
 * was still up and never logged an unexpected error. The body and MCP-session limits of issue 25 items 3,
 * 4, 7 and 11 are exercised by the same run.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ms, table } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const MIB = 1024 * 1024;

export interface AbuseOptions {
  seconds: number;
  /** Requests whose bodies never finish (half REST, half MCP). */
  unfinished: number;
  /** Bytes each unfinished body sends before it stalls. */
  unfinishedBytes: number;
  /** The server's --cache-size, --max-open-stores and --body-limit. */
  cacheSizeBytes: number;
  maxOpenStores: number;
  bodyLimitBytes: number;
  /** Attacker stores of large files read page by page. */
  heavyStores: number;
  /** The abuses to run (default: all). */
  parts?: Array<'unfinished' | 'sessions' | 'stores' | 'reads' | 'list'>;
}

export const DEFAULT_ABUSE: AbuseOptions = {
  seconds: 20,
  unfinished: 40,
  unfinishedBytes: 900 * 1024,
  cacheSizeBytes: 64 * MIB,
  maxOpenStores: 64,
  bodyLimitBytes: MIB,
  heavyStores: 8,
};

/**
 * The terms of docs/reliability.md's bound ("Memory: the whole bound"): the JavaScript heap of an idle
 * server (modules, templates), what an open store holds outside the shared cache, the work of requests
 * being rendered, and what the process holds beside its heap (V8's young generation and code, native
 * memory). Request bodies are Buffers, outside the heap.
 */
export const BASE_HEAP_BYTES = 64 * MIB;
export const PER_OPEN_STORE_BYTES = MIB;
export const RENDER_SLACK_BYTES = 64 * MIB;
export const BESIDE_HEAP_BYTES = 96 * MIB;

export interface AbuseResult {
  options: AbuseOptions;
  victim: { calls: number; errors: number; errorKinds: Record<string, number>; p50: number; p99: number; byKind: Record<string, { calls: number; p99: number }> };
  attacker: Record<string, Record<string, number>>;
  peakRssBytes: number;
  /** Resident memory after the set-up, before the attack; and right after start. */
  idleRssBytes: number;
  startRssBytes: number;
  boundBytes: number;
  stillUp: boolean;
  unexpected: number;
  seconds: number;
}

/** The heap the server is given (`--max-old-space-size`): idle + caches + open stores + rendering. */
export function heapBound(o: AbuseOptions): number {
  return BASE_HEAP_BYTES + o.cacheSizeBytes + o.maxOpenStores * PER_OPEN_STORE_BYTES + RENDER_SLACK_BYTES;
}

/** The bound of resident memory for this configuration: the heap, what lies beside it, and the bodies in flight. */
export function memoryBound(o: AbuseOptions): number {
  return heapBound(o) + BESIDE_HEAP_BYTES + o.unfinished * Math.min(o.unfinishedBytes, o.bodyLimitBytes);
}

interface Server {
  url: string;
  port: number;
  pid: number;
  stderr: () => string;
  exited: Promise<number | null>;
  alive: () => boolean;
}

function startServer(root: string, o: AbuseOptions): Promise<Server> {
  const child = spawn(
    process.execPath,
    [CLI, 'server', '--root', root, '--port', '0', '--cache-size', String(o.cacheSizeBytes), '--max-open-stores', String(o.maxOpenStores), '--body-limit', `${Math.round(o.bodyLimitBytes / 1024)}kb`],
    // The heap is capped at the bound's heap term: a bound the process could pass by growing its heap would prove nothing.
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: `--max-old-space-size=${Math.round(heapBound(o) / MIB)}` } },
  );
  let err = '';
  let running = true;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => ((running = false), resolve(code))));
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
      const match = / at (http:\/\/127\.0\.0\.1:(\d+))\//.exec(err);
      if (match) resolve({ url: match[1], port: Number(match[2]), pid: child.pid!, stderr: () => err, exited, alive: () => running });
    });
    void exited.then((code) => reject(new Error(`memgit server exited with ${code}: ${err}`)));
  });
}

function rssOf(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

function makeKey(root: string, stores: string): string {
  const run = spawnSync(process.execPath, [CLI, 'keys', 'create', '--root', root, '--stores', stores, '--scope', 'write', '--json'], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`keys create: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { key: string }).key;
}

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const INITIALIZE = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name, version: '1' } } });

export async function abuseRun(o: AbuseOptions = DEFAULT_ABUSE, log: (line: string) => void = () => undefined): Promise<AbuseResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-abuse-'));
  const sockets: net.Socket[] = [];
  try {
    const victimKey = makeKey(root, 'victim-*');
    const attackerKey = makeKey(root, 'atk-*');
    const server = await startServer(root, o);
    const startRss = rssOf(server.pid);
    const on = (part: NonNullable<AbuseOptions['parts']>[number]) => !o.parts || o.parts.includes(part);
    const tally = (bucket: Record<string, number>, status: string | number) => (bucket[status] = (bucket[status] ?? 0) + 1);
    const toolCall = (key: string, store: string, id: string, input: unknown, session: string) =>
      fetch(`${server.url}/api/v1/stores/${store}/tool-calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool_use: { type: 'tool_use', id, name: 'memory', input }, session }),
        signal: AbortSignal.timeout(60_000),
      });
    const mcp = (key: string, store: string, body: unknown, session?: string) =>
      fetch(`${server.url}/stores/${store}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });

    // Set-up (not timed): the attacker's stores of large files, and the stores the unfinished bodies aim at.
    log(`abuse: setting up ${o.heavyStores} attacker stores of large files`);
    const lines = Array.from({ length: 12_000 }, (_, i) => `line ${i} of a large memory file, padded with words to be long ${i * 13}`);
    for (let s = 0; s < o.heavyStores; s++) {
      const text = `${lines.map((l) => `${s} ${l}`).join('\n')}\n`;
      await (await toolCall(attackerKey, `atk-heavy-${s}`, `toolu_heavy_${s}_a`, { command: 'create', path: '/memories/big.md', file_text: text }, 'sess_atk')).text();
      await (await toolCall(attackerKey, `atk-heavy-${s}`, `toolu_heavy_${s}_b`, { command: 'str_replace', path: '/memories/big.md', old_str: `${s} line 50 of`, new_str: `${s} LINE 50 of` }, 'sess_atk')).text();
    }
    await (await toolCall(attackerKey, 'atk-hold', 'toolu_hold', { command: 'view', path: '/memories' }, 'sess_atk')).text();

    const idleRss = rssOf(server.pid);
    let peak = idleRss;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 100);
    const deadline = Date.now() + o.seconds * 1000;
    const running = () => Date.now() < deadline && server.alive();
    const attacker: Record<string, Record<string, number>> = {};
    const bucket = (name: string) => (attacker[name] ??= {});

    // 1. Unfinished bodies: sent up to a byte short of their Content-Length, then held until the end.
    const hold = (target: string, i: number) =>
      new Promise<void>((resolve) => {
        const socket = net.connect(server.port, '127.0.0.1');
        sockets.push(socket);
        const mcpTarget = target.endsWith('/mcp');
        socket.on('connect', () => {
          const head =
            `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${attackerKey}\r\n` +
            `Content-Type: application/json\r\n${mcpTarget ? 'Accept: application/json, text/event-stream\r\n' : ''}Content-Length: ${o.unfinishedBytes + 1}\r\n\r\n`;
          socket.write(head);
          const filler = `{"tool_use": {"type": "tool_use", "id": "toolu_unfinished_${i}", "name": "memory", "input": {"command": "create", "path": "/memories/u.md", "file_text": "`;
          socket.write(filler + 'x'.repeat(Math.max(0, o.unfinishedBytes - filler.length)));
          tally(bucket('unfinished bodies'), 'held');
          resolve();
        });
        socket.on('data', (chunk) => {
          const status = /^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'))?.[1];
          if (status) tally(bucket('unfinished bodies'), `answered ${status}`);
        });
        socket.on('error', () => tally(bucket('unfinished bodies'), 'connection error'));
      });
    if (on('unfinished')) await Promise.all(Array.from({ length: o.unfinished }, (_, i) => hold(i % 2 ? '/stores/atk-hold/mcp' : '/api/v1/stores/atk-hold/tool-calls', i)));

    // 2. Session flood: MCP initialize after initialize.
    const sessionFlood = async () => {
      for (let i = 0; running(); i++) {
        const answer = await mcp(attackerKey, 'atk-sessions', INITIALIZE(`flood-${i}`)).catch(() => null);
        tally(bucket('MCP initialize flood'), answer ? answer.status : 'connection error');
        await answer?.body?.cancel().catch(() => undefined);
      }
    };
    // 3. Store flood: a new store with every call.
    const storeFlood = async () => {
      for (let i = 0; running(); i++) {
        const answer = await toolCall(attackerKey, `atk-flood-${i}`, `toolu_flood_${i}`, { command: 'create', path: '/memories/x.md', file_text: 'x' }, 'sess_flood').catch(() => null);
        tally(bucket('store creation flood'), answer ? answer.status : 'connection error');
        await answer?.text().catch(() => undefined);
      }
    };
    // 4. Cache-heavy reads of its own stores, and 5. the store list at /.
    const basic = { authorization: `Basic ${Buffer.from(`x:${attackerKey}`).toString('base64')}` };
    const heavyReads = async () => {
      const pages: string[] = [];
      for (let s = 0; s < o.heavyStores; s++) {
        const rows = ((await (await fetch(`${server.url}/api/v1/stores/atk-heavy-${s}/commits`, { headers: { authorization: `Bearer ${attackerKey}` } })).json()) as { rows?: Array<{ commit: string }> }).rows ?? [];
        // Every commit's page, and the file's page at each commit that has it (all but the store's first).
        rows.forEach((r, n) => pages.push(`/stores/atk-heavy-${s}/commits/${r.commit}`, ...(n < rows.length - 1 ? [`/stores/atk-heavy-${s}/files/big.md?at=${r.commit}`] : [])));
      }
      for (let i = 0; running() && pages.length > 0; i++) {
        const answer = await fetch(`${server.url}${pages[i % pages.length]}`, { headers: basic, signal: AbortSignal.timeout(60_000) }).catch(() => null);
        tally(bucket('cache-heavy page reads'), answer ? answer.status : 'connection error');
        await answer?.arrayBuffer().catch(() => undefined);
      }
    };
    const storeList = async () => {
      while (running()) {
        const answer = await fetch(`${server.url}/`, { headers: basic, signal: AbortSignal.timeout(60_000) }).catch(() => null);
        tally(bucket('store list /'), answer ? answer.status : 'connection error');
        await answer?.text().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };

    // The victim: ordinary calls, timed.
    const latencies: Record<string, number[]> = { 'tool call': [], 'read API': [], 'MCP tool call': [] };
    const errorKinds: Record<string, number> = {};
    const victim = async (c: number) => {
      let session: string | null = null;
      let t = 0; // tool calls so far: create f(t), view, insert into the file created two calls before
      for (let i = 0; running(); i++) {
        // A client of ordinary pace: at most a call every 150 ms (well within its key's rate limit).
        const paced = new Promise((resolve) => setTimeout(resolve, 150));
        const store = `victim-${c}`;
        const kind = i % 5 === 4 ? 'read API' : i % 5 === 3 ? 'MCP tool call' : 'tool call';
        const started = performance.now();
        try {
          let ok = false;
          if (kind === 'tool call') {
            const input =
              t % 3 === 0
                ? { command: 'create', path: `/memories/f${t % 10}.md`, file_text: `call ${i}\nline two\n` }
                : t % 3 === 1
                  ? { command: 'view', path: '/memories' }
                  : { command: 'insert', path: `/memories/f${(t - 2) % 10}.md`, insert_line: 1, insert_text: `n ${i}` };
            t++;
            const answer = await toolCall(victimKey, store, `toolu_v${c}_${i}`, input, `sess_victim_${c}`);
            const body = (await answer.json()) as { tool_result?: { is_error?: boolean } };
            ok = answer.status === 200 && body.tool_result?.is_error !== true;
            if (!ok) tally(errorKinds, `${kind}: ${answer.status}`);
          } else if (kind === 'read API') {
            const answer = await fetch(`${server.url}/api/v1/stores/${store}/commits`, { headers: { authorization: `Bearer ${victimKey}` }, signal: AbortSignal.timeout(60_000) });
            await answer.arrayBuffer();
            ok = answer.status === 200;
            if (!ok) tally(errorKinds, `${kind}: ${answer.status}`);
          } else {
            if (session === null) {
              const opened = await mcp(victimKey, store, INITIALIZE(`victim-${c}`));
              await opened.text();
              session = opened.headers.get('mcp-session-id');
              if (session) await (await mcp(victimKey, store, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
            }
            const answer = session ? await mcp(victimKey, store, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'memory', arguments: { command: 'view', path: '/memories' } } }, session) : null;
            const text = answer ? await answer.text() : '';
            ok = answer?.status === 200 && text.includes('"result"') && !text.includes('"isError":true');
            if (!ok) {
              tally(errorKinds, `${kind}: ${answer?.status ?? 'no session'}`);
              session = null; // begin again, as a client would
            }
          }
          if (ok) latencies[kind].push(performance.now() - started);
        } catch (error) {
          tally(errorKinds, `${kind}: ${(error as Error).message}`);
        }
        await paced;
      }
    };
    // The victim's stores exist before the clock starts (its first calls create them).
    for (let c = 0; c < 2; c++) await (await toolCall(victimKey, `victim-${c}`, `toolu_v${c}_init`, { command: 'view', path: '/memories' }, `sess_victim_${c}`)).text();

    log(`abuse: ${o.seconds} s — ${o.unfinished} unfinished bodies held, session and store floods, cache-heavy reads, the store list; the victim timed`);
    const started = performance.now();
    const none = async () => undefined;
    await Promise.all([on('sessions') ? sessionFlood() : none(), on('stores') ? storeFlood() : none(), on('reads') ? heavyReads() : none(), on('list') ? storeList() : none(), victim(0), victim(1)]);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(server.pid));
    for (const socket of sockets) socket.destroy();
    const health = server.alive() ? await fetch(`${server.url}/healthz`).then((r) => r.status).catch(() => 0) : 0;
    const stillUp = server.alive() && health === 200;
    const unexpected = server.stderr().split('\n').filter((l) => l.startsWith('memgit: UNEXPECTED')).length;
    if (server.alive()) {
      process.kill(server.pid, 'SIGTERM');
      await server.exited;
    }
    const all = Object.values(latencies).flat().sort((a, b) => a - b);
    const byKind = Object.fromEntries(Object.entries(latencies).map(([k, v]) => [k, { calls: v.length, p99: percentile([...v].sort((a, b) => a - b), 0.99) }]));
    const errors = Object.values(errorKinds).reduce((a, b) => a + b, 0);
    return {
      options: o,
      victim: { calls: all.length, errors, errorKinds, p50: percentile(all, 0.5), p99: percentile(all, 0.99), byKind },
      attacker,
      peakRssBytes: peak,
      idleRssBytes: idleRss,
      startRssBytes: startRss,
      boundBytes: memoryBound(o),
      stillUp,
      unexpected,
      seconds,
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function renderAbuseSection(r: AbuseResult, note = ''): string {
  const o = r.options;
  const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
  const out: string[] = ['## Server under abuse: one key attacks, another key is timed', ''];
  out.push(
    `\`memgit server\` (built CLI, its own process; \`--cache-size ${mib(o.cacheSizeBytes)} --max-open-stores ${o.maxOpenStores} --body-limit ${Math.round(o.bodyLimitBytes / 1024)}kb\`, ` +
      `the other limits at their defaults; its heap capped at the bound's heap term, \`--max-old-space-size=${Math.round(heapBound(o) / MIB)}\`) for ${r.seconds.toFixed(0)} s (bench/abuse.ts). The attacker's key, all at once: ${o.unfinished} requests whose bodies ` +
      `never finish (${Math.round(o.unfinishedBytes / 1024)} KiB sent each, half to the tool API, half to MCP), a flood of MCP \`initialize\`, a flood of store creations, ` +
      `reads of the commit and file pages of ${o.heavyStores} of its stores of 0.9 MiB files, and the store list at \`/\` every 200 ms. ` +
      'The victim\'s key meanwhile: two clients, each with HTTP tool calls, a read-API call and an MCP tool call (on a session it keeps) in turn.',
    '',
  );
  const kinds = Object.entries(r.victim.byKind).map(([k, v]) => `${k} ${v.calls} (p99 ${ms(v.p99)})`).join(', ');
  out.push(
    table(
      ['victim calls', 'victim p50', 'victim p99', 'victim errors', 'server peak RSS', 'bound of its configuration', 'process still up', 'unexpected errors logged'],
      [[String(r.victim.calls), ms(r.victim.p50), ms(r.victim.p99), String(r.victim.errors), mib(r.peakRssBytes), mib(r.boundBytes), r.stillUp ? 'yes' : '**no**', String(r.unexpected)]],
    ),
    '',
    `Victim calls by kind: ${kinds}.${r.victim.errors ? ` Victim errors: ${Object.entries(r.victim.errorKinds).map(([k, n]) => `${k} × ${n}`).join(', ')}.` : ''}`,
    '',
    'What the attacker got: ' + Object.entries(r.attacker).map(([k, v]) => `${k}: ${Object.entries(v).map(([s, n]) => `${s} × ${n}`).join(', ')}`).join('; ') + '.',
    '',
    `The bound is docs/reliability.md's formula for this configuration: heap ${mib(BASE_HEAP_BYTES)} (idle server) + ${mib(o.cacheSizeBytes)} (--cache-size) + ` +
      `${o.maxOpenStores} × ${mib(PER_OPEN_STORE_BYTES)} (open stores) + ${mib(RENDER_SLACK_BYTES)} (requests being rendered), plus ${mib(BESIDE_HEAP_BYTES)} beside the heap ` +
      `and ${o.unfinished} × ${Math.round(Math.min(o.unfinishedBytes, o.bodyLimitBytes) / 1024)} KiB (bodies in flight). RSS after the set-up (the attacker's stores written, before the attack): ${mib(r.idleRssBytes)}.`,
    '',
  );
  if (note) out.push(note, '');
  return out.join('\n');
}

function sizeArg(value: string): number {
  const m = /^(\d+)(kb|mb)?$/i.exec(value);
  if (!m) throw new Error(`bad size ${value}`);
  return Number(m[1]) * (m[2]?.toLowerCase() === 'mb' ? MIB : m[2] ? 1024 : 1);
}

async function main(): Promise<void> {
  const flags = new Map(
    process.argv.slice(2).map((arg) => {
      const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
      if (!m) throw new Error(`unknown argument ${arg} (see bench/abuse.ts)`);
      return [m[1], m[2] ?? 'true'] as const;
    }),
  );
  const o: AbuseOptions = {
    ...DEFAULT_ABUSE,
    seconds: Number(flags.get('seconds') ?? DEFAULT_ABUSE.seconds),
    unfinished: Number(flags.get('unfinished') ?? DEFAULT_ABUSE.unfinished),
    cacheSizeBytes: flags.has('cache-size') ? sizeArg(flags.get('cache-size')!) : DEFAULT_ABUSE.cacheSizeBytes,
    ...(flags.has('parts') ? { parts: flags.get('parts')!.split(',') as AbuseOptions['parts'] } : {}),
  };
  const result = await abuseRun(o, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(renderAbuseSection(result));
  process.stderr.write(`RSS at start ${(result.startRssBytes / MIB).toFixed(0)} MiB, after set-up ${(result.idleRssBytes / MIB).toFixed(0)} MiB, peak ${(result.peakRssBytes / MIB).toFixed(0)} MiB\n`);
  if (!result.stillUp || result.unexpected > 0) process.exit(1);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
