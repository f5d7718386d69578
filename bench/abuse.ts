/**
 * The mixed-abuse run of issue 25, a section of `npm run bench` (and of `npm run stress`), also alone:
 *
 *   node dist/bench/abuse.js [--seconds=40] [--collusion-seconds=10] [--cache-size=64mb] [--parts=...]
 *
 * One `memgit server` (the built CLI, its own process, its limits at their defaults but for the cache and
 * the open stores) and a victim key whose ordinary calls — HTTP tool calls, a read-API call now and then,
 * MCP tool calls on a session it keeps — are timed throughout. Three phases:
 *
 * 1. One attacker, each abuse with a key of its own (so that no abuse is merely throttled by another's
 *    rate limit), all at once for `seconds`: 80 REST and 80 MCP requests of one key declaring 8 MiB bodies
 *    sent up to a byte short and held (sent again when the server drops them); 64 bodies of another key
 *    dripping at one byte a second; 1,000 MCP `initialize` of a third; JSON-RPC batches of 100 tool calls
 *    under the rate limit; a flood of store creations; cache-heavy reads of its own stores of large files;
 *    and the store list at `/` every 200 ms.
 * 2. Collusion, for `collusionSeconds`: several keys hold unfinished 8 MiB bodies together, filling the
 *    server's --body-budget; the victim's requests with a body are then refused (503, Retry-After), its
 *    reads are not. Then the bodies go, and the victim's calls succeed again.
 * 3. Revocation: keys holding an open MCP event stream are revoked with `memgit keys revoke`; the time
 *    until the server closes each stream.
 *
 * Reported: the victim's p50 / p99 and errors per phase (MCP sessions lost among them), every answer the
 * attacker got by abuse, status and the limit that gave it, the server's peak resident memory against the
 * bound of its configuration (the formula in docs/reliability.md, "Memory: the whole bound", with the
 * heap capped at its heap terms), and whether the process stayed up without an unexpected error.
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
const KIB = 1024;

type Part = 'unfinished' | 'drip' | 'sessions' | 'batches' | 'stores' | 'reads' | 'list' | 'collusion' | 'revoke';

export interface AbuseOptions {
  /** Phase 1: one attacker's abuses, all at once. */
  seconds: number;
  /** Phase 2: colluding keys fill the body budget (0 skips it). */
  collusionSeconds: number;
  /** Unfinished bodies of one key: to the tool API and to MCP. */
  restBodies: number;
  mcpBodies: number;
  /** The Content-Length each unfinished body declares (all but its last byte is sent). */
  unfinishedBytes: number;
  /** Bodies dripping at one byte a second (half REST, half MCP), each declaring `dripBytes`. */
  dripBodies: number;
  dripBytes: number;
  /** MCP initialize calls of one key. */
  initializeCalls: number;
  /** Tool calls per JSON-RPC batch. */
  batchSize: number;
  /** Keys holding unfinished bodies together in phase 2 (each as many as its share of the budget allows). */
  colludingKeys: number;
  /** Keys revoked while holding an event stream (phase 3; 0 skips it). */
  revocations: number;
  /** Attacker stores of large files read page by page. */
  heavyStores: number;
  /** The server's configuration (defaults but for the cache and the open stores). */
  cacheSizeBytes: number;
  maxOpenStores: number;
  bodyLimitBytes: number;
  bodyBudgetBytes: number;
  keyBodyBudgetBytes: number;
  bodyTimeoutSeconds: number;
  mcpMaxSessions: number;
  rateLimitPerMinute: number;
  /** The abuses to run (default: all). */
  parts?: Part[];
}

export const DEFAULT_ABUSE: AbuseOptions = {
  seconds: 40,
  collusionSeconds: 10,
  restBodies: 80,
  mcpBodies: 80,
  unfinishedBytes: 8 * MIB,
  dripBodies: 64,
  dripBytes: 1000,
  initializeCalls: 1000,
  batchSize: 100,
  colludingKeys: 4,
  revocations: 3,
  heavyStores: 8,
  cacheSizeBytes: 64 * MIB,
  maxOpenStores: 64,
  bodyLimitBytes: 8 * MIB,
  bodyBudgetBytes: 128 * MIB,
  keyBodyBudgetBytes: 32 * MIB,
  bodyTimeoutSeconds: 30,
  mcpMaxSessions: 1000,
  rateLimitPerMinute: 1200,
};

/**
 * The terms of docs/reliability.md's bound ("Memory: the whole bound"): the JavaScript heap of an idle
 * server (modules, templates), what an open store holds outside the shared cache, the work of requests
 * being rendered, an MCP session's state, what the process holds beside its heap (V8's young generation
 * and code, native memory), and request bodies: while they arrive they are Buffers outside the heap
 * (measured 1.3 × the bytes held), once parsed their text is on the heap too (1.2 × more).
 */
export const BASE_HEAP_BYTES = 64 * MIB;
export const PER_OPEN_STORE_BYTES = MIB;
export const RENDER_SLACK_BYTES = 64 * MIB;
export const PER_SESSION_HEAP_BYTES = 32 * KIB;
export const BESIDE_HEAP_BYTES = 96 * MIB;
export const BODIES_ARRIVING_FACTOR = 1.3;
export const BODIES_PARSED_HEAP_FACTOR = 1.2;

/** The heap the server is given (`--max-old-space-size`): idle + caches + open stores + rendering + sessions + parsed bodies. */
export function heapBound(o: AbuseOptions): number {
  return (
    BASE_HEAP_BYTES +
    o.cacheSizeBytes +
    o.maxOpenStores * PER_OPEN_STORE_BYTES +
    RENDER_SLACK_BYTES +
    o.mcpMaxSessions * PER_SESSION_HEAP_BYTES +
    BODIES_PARSED_HEAP_FACTOR * o.bodyBudgetBytes
  );
}

/** The bound of resident memory for this configuration: the heap, what lies beside it, and the bodies arriving. */
export function memoryBound(o: AbuseOptions): number {
  return heapBound(o) + BESIDE_HEAP_BYTES + BODIES_ARRIVING_FACTOR * o.bodyBudgetBytes;
}

interface VictimPhase {
  calls: number;
  errors: number;
  errorKinds: Record<string, number>;
  /** MCP sessions the victim lost (404 on its own session id) and had to open again. */
  sessionsLost: number;
  p50: number;
  p99: number;
  byKind: Record<string, { calls: number; p99: number }>;
  /** Answers by kind and status (phase 2: what a victim sees while the body budget is full). */
  statuses: Record<string, Record<string, number>>;
}

export interface AbuseResult {
  options: AbuseOptions;
  victim: VictimPhase;
  collusion: { during: VictimPhase; after: VictimPhase; attacker: Record<string, number> } | null;
  /** Phase 1: per abuse, answers counted by `status limit`. */
  attacker: Record<string, Record<string, number>>;
  /** Milliseconds from `memgit keys revoke` returning to the server closing the key's event stream. */
  revocationMs: number[];
  peakRssBytes: number;
  /** Resident memory after the set-up, before the attack; and right after start. */
  idleRssBytes: number;
  startRssBytes: number;
  boundBytes: number;
  stillUp: boolean;
  unexpected: number;
  seconds: number;
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
  const args = [
    CLI, 'server', '--root', root, '--port', '0',
    '--cache-size', String(o.cacheSizeBytes),
    '--max-open-stores', String(o.maxOpenStores),
    '--body-limit', `${Math.round(o.bodyLimitBytes / KIB)}kb`,
    '--body-budget', `${Math.round(o.bodyBudgetBytes / KIB)}kb`,
    '--key-body-budget', `${Math.round(o.keyBodyBudgetBytes / KIB)}kb`,
    '--body-timeout', String(o.bodyTimeoutSeconds),
    '--mcp-max-sessions', String(o.mcpMaxSessions),
    '--rate-limit', String(o.rateLimitPerMinute),
  ];
  const child = spawn(process.execPath, args, {
    // The heap is capped at the bound's heap terms: a bound the process could pass by growing its heap would prove nothing.
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: `--max-old-space-size=${Math.round(heapBound(o) / MIB)}` },
  });
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

function makeKey(root: string, stores: string): { key: string; id: string } {
  const run = spawnSync(process.execPath, [CLI, 'keys', 'create', '--root', root, '--stores', stores, '--scope', 'write', '--json'], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`keys create: ${run.stderr}`);
  const made = JSON.parse(run.stdout) as { key: string; info: { id: string } };
  return { key: made.key, id: made.info.id };
}

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Which limit a refusal names (from its error text), for the tally; a 2xx answer is its status. */
export function limitOf(status: number | string, text: string): string {
  if (/^2\d\d$/.test(String(status))) return String(status);
  const named: Array<[RegExp, string]> = [
    [/requests a minute/, 'rate limit'],
    [/request bodies in flight/, 'key body budget'],
    [/of request bodies, its limit/, 'body budget'],
    [/did not arrive within/, 'body timeout'],
    [/Too many open MCP sessions for this key/, 'sessions per key'],
    [/Too many open MCP sessions/, 'sessions'],
    [/too many calls in flight/, 'store queue'],
    [/--max-stores-per-key/, 'stores per key'],
    [/--max-store-bytes|memory store is full/, 'store size'],
  ];
  const found = named.find(([pattern]) => pattern.test(text));
  return found ? `${status} ${found[1]}` : String(status);
}

/** The JSON-RPC messages of an MCP answer (a JSON body, or the data lines of an event stream). */
function jsonRpcMessages(type: string, text: string): Array<Record<string, unknown>> {
  try {
    if (type.startsWith('text/event-stream')) {
      return text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    }
    const parsed = JSON.parse(text) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
  } catch {
    return [];
  }
}

const INITIALIZE = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name, version: '1' } } });
const tally = (bucket: Record<string, number>, status: string | number) => (bucket[status] = (bucket[status] ?? 0) + 1);

export async function abuseRun(o: AbuseOptions = DEFAULT_ABUSE, log: (line: string) => void = () => undefined): Promise<AbuseResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-abuse-'));
  fs.chmodSync(root, 0o700);
  const sockets = new Set<net.Socket>();
  /** Sockets the run itself closed (a body held to the end of its phase), as opposed to the server. */
  const ended = new WeakSet<net.Socket>();
  const endAll = () => {
    for (const socket of sockets) {
      ended.add(socket);
      socket.destroy();
    }
  };
  try {
    const victimKey = makeKey(root, 'victim-*').key;
    const keys = {
      bodies: makeKey(root, 'atk-*').key,
      drip: makeKey(root, 'atk-*').key,
      sessions: makeKey(root, 'atk-*').key,
      batches: makeKey(root, 'atk-*').key,
      stores: makeKey(root, 'atk-*').key,
      reads: makeKey(root, 'atk-*').key,
    };
    const colluders = Array.from({ length: o.colludingKeys }, () => makeKey(root, 'atk-*').key);
    const revoked = Array.from({ length: o.revocations }, () => makeKey(root, 'atk-*'));
    const server = await startServer(root, o);
    const startRss = rssOf(server.pid);
    const on = (part: Part) => !o.parts || o.parts.includes(part);
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
    /** Open an MCP session: initialize and its notification; the session id, or null. */
    const openSession = async (key: string, store: string, name: string): Promise<string | null> => {
      const opened = await mcp(key, store, INITIALIZE(name));
      await opened.text();
      const session = opened.headers.get('mcp-session-id');
      if (session) await (await mcp(key, store, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
      return session;
    };

    // Set-up (not timed): the attacker's stores of large files, the stores its other abuses aim at, the victim's.
    log(`abuse: setting up ${o.heavyStores} attacker stores of large files`);
    const lines = Array.from({ length: 12_000 }, (_, i) => `line ${i} of a large memory file, padded with words to be long ${i * 13}`);
    for (let s = 0; s < o.heavyStores; s++) {
      const text = `${lines.map((l) => `${s} ${l}`).join('\n')}\n`;
      await (await toolCall(keys.reads, `atk-heavy-${s}`, `toolu_heavy_${s}_a`, { command: 'create', path: '/memories/big.md', file_text: text }, 'sess_atk')).text();
      await (await toolCall(keys.reads, `atk-heavy-${s}`, `toolu_heavy_${s}_b`, { command: 'str_replace', path: '/memories/big.md', old_str: `${s} line 50 of`, new_str: `${s} LINE 50 of` }, 'sess_atk')).text();
    }
    for (const [key, store] of [[keys.bodies, 'atk-hold'], [keys.batches, 'atk-batch'], [keys.sessions, 'atk-sessions']] as const) {
      await (await toolCall(key, store, `toolu_setup_${store}`, { command: 'view', path: '/memories' }, `sess_setup_${store}`)).text();
    }
    for (let r = 0; r < revoked.length; r++) await (await toolCall(revoked[r].key, `atk-rev-${r}`, `toolu_rev_${r}`, { command: 'view', path: '/memories' }, 'sess_rev')).text();
    for (let c = 0; c < 2; c++) await (await toolCall(victimKey, `victim-${c}`, `toolu_v${c}_init`, { command: 'view', path: '/memories' }, `sess_victim_${c}`)).text();

    const idleRss = rssOf(server.pid);
    let peak = idleRss;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 100);

    /**
     * A request over a raw connection whose body is sent slowly or not finished: the head, then `send`
     * bytes of the body (as fast as the server reads them), then one byte every `dripMs` if set, and
     * held. Resolves with the answer's status and limit ('dropped' when the connection closed unanswered).
     */
    const rawBody = (key: string, target: string, declared: number, send: number, dripMs: number | null): Promise<string> =>
      new Promise((resolve) => {
        const socket = net.connect(server.port, '127.0.0.1');
        sockets.add(socket);
        let answer = '';
        let timer: NodeJS.Timeout | null = null;
        socket.on('data', (chunk) => {
          if (answer.length < 4096) answer += chunk.toString('latin1');
        });
        socket.on('error', () => undefined);
        socket.on('close', () => {
          if (timer) clearInterval(timer);
          sockets.delete(socket);
          const status = /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1];
          resolve(status ? limitOf(status, answer) : ended.has(socket) ? 'held to the end' : 'reset, its answer unread');
        });
        socket.on('connect', () => {
          const mcpTarget = target.endsWith('/mcp');
          socket.write(
            `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
              `${mcpTarget ? 'Accept: application/json, text/event-stream\r\n' : ''}Content-Length: ${declared}\r\n\r\n`,
          );
          void (async () => {
            const piece = Buffer.alloc(64 * KIB, 'x');
            Buffer.from('{"tool_use": {"type": "tool_use", "id": "toolu_unfinished", "name": "memory", "input": {"command": "create", "path": "/memories/u.md", "file_text": "').copy(piece);
            for (let sent = 0; sent < send && !socket.destroyed; ) {
              const n = Math.min(piece.length, send - sent);
              const flushed = socket.write(n === piece.length ? piece : piece.subarray(0, n));
              sent += n;
              if (!flushed) await new Promise((resume) => (socket.once('drain', resume), socket.once('close', resume)));
            }
            if (dripMs !== null && !socket.destroyed) timer = setInterval(() => socket.destroyed || socket.write('x'), dripMs);
          })();
        });
      });

    // ---- Phase 1: one attacker, each abuse with its own key, all at once.
    const deadline = Date.now() + o.seconds * 1000;
    const running = () => Date.now() < deadline && server.alive();
    const attacker: Record<string, Record<string, number>> = {};
    const bucket = (name: string) => (attacker[name] ??= {});
    /** Read an answer's text and tally its status and limit. */
    const count = async (name: string, answer: Response | null) => {
      if (!answer) return tally(bucket(name), 'connection error');
      const text = await answer.text().catch(() => '');
      tally(bucket(name), limitOf(answer.status, text));
    };

    // 1. Unfinished 8 MiB bodies of one key; one the server drops (the body timeout) is sent again.
    const unfinished = async (target: string) => {
      while (running()) {
        const outcome = await rawBody(keys.bodies, target, o.unfinishedBytes, o.unfinishedBytes - 1, null);
        tally(bucket('unfinished 8 MiB bodies'), outcome);
        if (!outcome.includes('body timeout')) return;
      }
    };
    // 2. Bodies dripping at one byte a second.
    const drip = async (target: string) => tally(bucket('bodies dripping 1 byte/s'), await rawBody(keys.drip, target, o.dripBytes, 1, 1000));
    // 3. MCP initialize, many times over (four at a time).
    let initializes = 0;
    const sessionFlood = async () => {
      while (running() && initializes < o.initializeCalls) {
        initializes++;
        const answer = await mcp(keys.sessions, 'atk-sessions', INITIALIZE(`flood-${initializes}`)).catch(() => null);
        await count(`MCP initialize ×${o.initializeCalls}`, answer);
      }
    };
    // 4. Batches of tool calls, each a write, on a session of its own.
    const batches = async () => {
      const session = await openSession(keys.batches, 'atk-batch', 'batches');
      for (let b = 0; running() && session; b++) {
        const batch = Array.from({ length: o.batchSize }, (_, i) => ({
          jsonrpc: '2.0',
          id: i + 1,
          method: 'tools/call',
          params: { name: 'memory', arguments: { command: 'create', path: `/memories/b${b}-${i}.md`, file_text: `batch ${b} call ${i}\n` } },
        }));
        const answer = await mcp(keys.batches, 'atk-batch', batch, session).catch(() => null);
        if (answer?.status !== 200) {
          await count(`MCP batches of ${o.batchSize} tool calls`, answer);
          continue;
        }
        // Answered: each call of the batch applied, or refused by a limit (its tool error names it).
        tally(bucket(`MCP batches of ${o.batchSize} tool calls`), 200);
        for (const message of jsonRpcMessages(answer.headers.get('content-type') ?? '', await answer.text())) {
          const result = message.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
          const text = (result?.content ?? []).map((c) => c.text ?? '').join('');
          tally(bucket(`… the calls in those batches`), result && !result.isError ? 'applied' : limitOf('refused', text || JSON.stringify(message)));
        }
      }
    };
    // 5. A new store with every call.
    const storeFlood = async () => {
      for (let i = 0; running(); i++) {
        await count('store creations', await toolCall(keys.stores, `atk-flood-${i}`, `toolu_flood_${i}`, { command: 'create', path: '/memories/x.md', file_text: 'x' }, 'sess_flood').catch(() => null));
      }
    };
    // 6. Cache-heavy reads of its own stores, and 7. the store list at /.
    const basic = { authorization: `Basic ${Buffer.from(`x:${keys.reads}`).toString('base64')}` };
    const heavyReads = async () => {
      const pages: string[] = [];
      for (let s = 0; s < o.heavyStores; s++) {
        const rows = ((await (await fetch(`${server.url}/api/v1/stores/atk-heavy-${s}/commits`, { headers: { authorization: `Bearer ${keys.reads}` } })).json()) as { rows?: Array<{ commit: string }> }).rows ?? [];
        // Every commit's page, and the file's page at each commit that has it (all but the store's first).
        rows.forEach((r, n) => pages.push(`/stores/atk-heavy-${s}/commits/${r.commit}`, ...(n < rows.length - 1 ? [`/stores/atk-heavy-${s}/files/big.md?at=${r.commit}`] : [])));
      }
      for (let i = 0; running() && pages.length > 0; i++) {
        const answer = await fetch(`${server.url}${pages[i % pages.length]}`, { headers: basic, signal: AbortSignal.timeout(60_000) }).catch(() => null);
        if (answer && answer.status === 200) {
          tally(bucket('cache-heavy page reads'), 200);
          await answer.arrayBuffer().catch(() => undefined);
        } else await count('cache-heavy page reads', answer);
      }
    };
    const storeList = async () => {
      while (running()) {
        await count('store list /', await fetch(`${server.url}/`, { headers: basic, signal: AbortSignal.timeout(60_000) }).catch(() => null));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };

    // The victim: ordinary calls, timed; results per phase.
    const freshPhase = (): VictimPhase & { latencies: Record<string, number[]> } =>
      ({ calls: 0, errors: 0, errorKinds: {}, sessionsLost: 0, p50: NaN, p99: NaN, byKind: {}, statuses: {}, latencies: { 'tool call': [], 'read API': [], 'MCP tool call': [] } });
    let current = freshPhase();
    const finish = (p: ReturnType<typeof freshPhase>): VictimPhase => {
      const all = Object.values(p.latencies).flat().sort((a, b) => a - b);
      const { latencies, ...rest } = p;
      return {
        ...rest,
        calls: all.length + rest.errors,
        p50: percentile(all, 0.5),
        p99: percentile(all, 0.99),
        byKind: Object.fromEntries(Object.entries(latencies).map(([k, v]) => [k, { calls: v.length, p99: percentile([...v].sort((a, b) => a - b), 0.99) }])),
      };
    };
    let victimsRun = true;
    const victim = async (c: number) => {
      let session: string | null = null;
      let t = 0; // tool calls so far: create f(t), view, insert into the file created two calls before
      for (let i = 0; victimsRun && server.alive(); i++) {
        // A client of ordinary pace: at most a call every 150 ms (well within its key's rate limit).
        const paced = new Promise((resolve) => setTimeout(resolve, 150));
        const store = `victim-${c}`;
        const kind = i % 5 === 4 ? 'read API' : i % 5 === 3 ? 'MCP tool call' : 'tool call';
        const p = current;
        const failed = (what: string) => {
          p.errors++;
          tally(p.errorKinds, `${kind}: ${what}`);
        };
        const started = performance.now();
        try {
          let status: number | string = 0;
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
            status = answer.status;
            ok = answer.status === 200 && body.tool_result?.is_error !== true;
          } else if (kind === 'read API') {
            const answer = await fetch(`${server.url}/api/v1/stores/${store}/commits`, { headers: { authorization: `Bearer ${victimKey}` }, signal: AbortSignal.timeout(60_000) });
            await answer.arrayBuffer();
            status = answer.status;
            ok = answer.status === 200;
          } else {
            if (session === null) session = await openSession(victimKey, store, `victim-${c}`);
            const answer = session ? await mcp(victimKey, store, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'memory', arguments: { command: 'view', path: '/memories' } } }, session) : null;
            const text = answer ? await answer.text() : '';
            status = answer?.status ?? 'no session';
            ok = answer?.status === 200 && text.includes('"result"') && !text.includes('"isError":true');
            // A session gone (404) is begun again, as a client would; a refusal (429, 503) is retried on it.
            if (answer?.status === 404) {
              p.sessionsLost++;
              session = null;
            }
          }
          tally((p.statuses[kind] ??= {}), status);
          if (ok) p.latencies[kind].push(performance.now() - started);
          else failed(String(status));
        } catch (error) {
          failed((error as Error).message);
        }
        await paced;
      }
    };
    const victims = [victim(0), victim(1)];

    log(
      `abuse: phase 1, ${o.seconds} s — ${o.restBodies}+${o.mcpBodies} unfinished bodies, ${o.dripBodies} dripping, ${o.initializeCalls} initialize, ` +
        `batches of ${o.batchSize}, store and read floods, the store list; the victim timed`,
    );
    const started = performance.now();
    const none = async () => undefined;
    const targets = (n: number, mcpShare: number) => Array.from({ length: n }, (_, i) => (i < n - mcpShare ? '/api/v1/stores/atk-hold/tool-calls' : '/stores/atk-hold/mcp'));
    const attacks = Promise.all([
      ...(on('unfinished') ? targets(o.restBodies + o.mcpBodies, o.mcpBodies).map(unfinished) : []),
      ...(on('drip') ? targets(o.dripBodies, Math.floor(o.dripBodies / 2)).map(drip) : []),
      ...(on('sessions') ? [sessionFlood(), sessionFlood(), sessionFlood(), sessionFlood()] : []),
      on('batches') ? batches() : none(),
      on('stores') ? storeFlood() : none(),
      on('reads') ? heavyReads() : none(),
      on('list') ? storeList() : none(),
    ]);
    await new Promise((resolve) => setTimeout(resolve, o.seconds * 1000));
    // Bodies still held (the phase ended before their timeout) go, and so do the drips.
    endAll();
    await attacks;
    const phase1 = finish(current);

    // ---- Phase 2: colluding keys fill the server's body budget; the victim goes on.
    let collusion: AbuseResult['collusion'] = null;
    if (o.collusionSeconds > 0 && on('collusion') && server.alive()) {
      log(`abuse: phase 2, ${o.collusionSeconds} s — ${o.colludingKeys} keys hold unfinished ${o.unfinishedBytes / MIB} MiB bodies together`);
      const held: Record<string, number> = {};
      // The server lets go of phase 1's bodies as their connections close: give it a moment.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      current = freshPhase();
      const until = Date.now() + o.collusionSeconds * 1000;
      const perKey = Math.ceil(o.keyBodyBudgetBytes / o.unfinishedBytes) + 1;
      // Each slot tries again, a quarter second later, when the server had no room (503) or the
      // connection was reset: together the keys keep --body-budget full, as colluding attackers would.
      const hold = async (key: string, target: string) => {
        for (;;) {
          const outcome = await rawBody(key, target, o.unfinishedBytes, o.unfinishedBytes - 1, null);
          tally(held, outcome);
          if (!(outcome.includes('503') || outcome.startsWith('reset')) || Date.now() >= until) return;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      };
      const holds = colluders.flatMap((key) => Array.from({ length: perKey }, (_, i) => hold(key, i % 2 ? `/stores/atk-hold/mcp` : `/api/v1/stores/atk-hold/tool-calls`)));
      await new Promise((resolve) => setTimeout(resolve, o.collusionSeconds * 1000));
      const during = finish(current);
      endAll();
      await Promise.all(holds);
      current = freshPhase();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      collusion = { during, after: finish(current), attacker: held };
    }
    victimsRun = false;
    await Promise.all(victims);

    // ---- Phase 3: revoked keys' event streams.
    const revocationMs: number[] = [];
    if (on('revoke') && server.alive()) {
      log(`abuse: phase 3 — ${revoked.length} keys revoked while holding an MCP event stream`);
      for (let r = 0; r < revoked.length; r++) {
        const store = `atk-rev-${r}`;
        const session = await openSession(revoked[r].key, store, `revoked-${r}`);
        if (!session) continue;
        const stream = await fetch(`${server.url}/stores/${store}/mcp`, {
          headers: { authorization: `Bearer ${revoked[r].key}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
          signal: AbortSignal.timeout(30_000),
        });
        const closed = (async () => {
          const reader = stream.body!.getReader();
          for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return performance.now();
        })();
        // Revoked while the stream is open; timed from the moment the key file says so.
        const revokedAt = await new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, [CLI, 'keys', 'revoke', revoked[r].id, '--root', root], { stdio: 'ignore' });
          child.once('exit', (code) => (code === 0 ? resolve(performance.now()) : reject(new Error(`keys revoke exited ${code}`))));
        });
        revocationMs.push((await closed) - revokedAt);
      }
    }

    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(server.pid));
    endAll();
    const health = server.alive() ? await fetch(`${server.url}/healthz`).then((r) => r.status).catch(() => 0) : 0;
    const stillUp = server.alive() && health === 200;
    const unexpected = server.stderr().split('\n').filter((l) => l.startsWith('memgit: UNEXPECTED')).length;
    if (server.alive()) {
      process.kill(server.pid, 'SIGTERM');
      await server.exited;
    }
    return {
      options: o,
      victim: phase1,
      collusion,
      attacker,
      revocationMs,
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

const counts = (bucket: Record<string, number>) =>
  Object.entries(bucket)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${s} × ${n}`)
    .join(', ');

export function renderAbuseSection(r: AbuseResult, note = ''): string {
  const o = r.options;
  const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
  const out: string[] = ['## Server under abuse: one tenant attacks, another key is timed', ''];
  out.push(
    `\`memgit server\` (built CLI, its own process; \`--cache-size ${mib(o.cacheSizeBytes)} --max-open-stores ${o.maxOpenStores}\`, every other limit at its default: ` +
      `\`--body-limit ${mib(o.bodyLimitBytes)}\`, \`--body-budget ${mib(o.bodyBudgetBytes)}\`, \`--key-body-budget ${mib(o.keyBodyBudgetBytes)}\`, \`--body-timeout ${o.bodyTimeoutSeconds}\`, ` +
      `\`--rate-limit ${o.rateLimitPerMinute}\`, \`--mcp-max-sessions ${o.mcpMaxSessions}\`, 16 sessions per key; its heap capped at the bound's heap terms, \`--max-old-space-size=${Math.round(heapBound(o) / MIB)}\`) (bench/abuse.ts). ` +
      `The victim's key throughout: two clients paced at one call per 150 ms at most, each with HTTP tool calls, a read-API call and an MCP tool call (on a session it keeps) in turn.`,
    '',
    `**Phase 1, ${o.seconds} s: one attacker**, each abuse with a key of its own, all at once: ${o.restBodies} REST and ${o.mcpBodies} MCP requests of one key declaring ${mib(o.unfinishedBytes)} bodies, ` +
      `sent but for their last byte and held (sent again when the server drops them); ${o.dripBodies} bodies of another key dripping at one byte a second; ${o.initializeCalls} MCP \`initialize\` of a third; ` +
      `JSON-RPC batches of ${o.batchSize} tool calls (each a write) on a session; a new store with every call; reads of the commit and file pages of ${o.heavyStores} of its stores of 0.9 MiB files; the store list at \`/\` every 200 ms.`,
    '',
  );
  const v = r.victim;
  out.push(
    table(
      ['victim calls', 'victim p50', 'victim p99', 'victim errors', 'MCP sessions lost', 'server peak RSS (all phases)', 'bound of its configuration', 'process still up', 'unexpected errors logged'],
      [[String(v.calls), ms(v.p50), ms(v.p99), String(v.errors), String(v.sessionsLost), mib(r.peakRssBytes), mib(r.boundBytes), r.stillUp ? 'yes' : '**no**', String(r.unexpected)]],
    ),
    '',
    `Victim calls by kind: ${Object.entries(v.byKind).map(([k, s]) => `${k} ${s.calls} (p99 ${ms(s.p99)})`).join(', ')}.${v.errors ? ` Victim errors: ${counts(v.errorKinds)}.` : ''}`,
    '',
    'What the attacker got, by status and the limit that answered:',
    '',
    table(['abuse', 'answers'], Object.entries(r.attacker).map(([k, b]) => [k, counts(b)])),
    '',
  );
  if (r.collusion) {
    const c = r.collusion;
    const statuses = (p: VictimPhase) => Object.entries(p.statuses).map(([k, b]) => `${k}: ${counts(b)}`).join('; ');
    out.push(
      `**Phase 2, ${o.collusionSeconds} s: ${o.colludingKeys} colluding keys** each hold as many unfinished ${mib(o.unfinishedBytes)} bodies as their share allows (and one more; a body the server had no room for is sent again a quarter second later), filling \`--body-budget\` together: ` +
        `${counts(c.attacker)}. The victim meanwhile: ${statuses(c.during)} (${c.during.errors} of ${c.during.calls} calls refused; p99 of those answered ${ms(c.during.p99)}). ` +
        `In the 3 s after the bodies went: ${statuses(c.after)}.`,
      '',
    );
  }
  if (r.revocationMs.length) {
    out.push(
      `**Phase 3: revocation.** ${r.revocationMs.length} keys, each holding an open MCP event stream, revoked with \`memgit keys revoke\`: the server closed each stream ` +
        `${r.revocationMs.map((t) => ms(t)).join(', ')} after the command returned (the server checks the key file every 2 s for keys with open sessions).`,
      '',
    );
  }
  out.push(
    `The bound is docs/reliability.md's formula for this configuration: heap ${mib(BASE_HEAP_BYTES)} (idle server) + ${mib(o.cacheSizeBytes)} (--cache-size) + ` +
      `${o.maxOpenStores} × ${mib(PER_OPEN_STORE_BYTES)} (open stores) + ${mib(RENDER_SLACK_BYTES)} (requests being rendered) + ${o.mcpMaxSessions} × ${PER_SESSION_HEAP_BYTES / KIB} KiB (MCP sessions) + ` +
      `${BODIES_PARSED_HEAP_FACTOR} × ${mib(o.bodyBudgetBytes)} (bodies parsed), plus ${mib(BESIDE_HEAP_BYTES)} beside the heap and ${BODIES_ARRIVING_FACTOR} × ${mib(o.bodyBudgetBytes)} (bodies arriving). ` +
      `RSS at start ${mib(r.startRssBytes)}; after the set-up (the attacker's stores written, before the attack) ${mib(r.idleRssBytes)}.`,
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
    collusionSeconds: Number(flags.get('collusion-seconds') ?? DEFAULT_ABUSE.collusionSeconds),
    cacheSizeBytes: flags.has('cache-size') ? sizeArg(flags.get('cache-size')!) : DEFAULT_ABUSE.cacheSizeBytes,
    ...(flags.has('parts') ? { parts: flags.get('parts')!.split(',') as Part[] } : {}),
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
