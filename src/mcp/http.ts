/**
 * The memory tool over MCP's Streamable HTTP transport, as an express-mountable handler: stateful
 * sessions keyed by `Mcp-Session-Id`, each bound to the store it was opened on and to its owner (the key
 * that opened it), and recorded as one memgit session. Authentication is the mounting server's job
 * (resolveTarget answers null for a request that may not reach a store); sessions are bounded in number,
 * in total and per owner, and closed when idle or when their owner is no longer valid.
 *
 *   const mcp = createMcpHttpHandler({ resolveTarget: async (req) => targetFor(req) });
 *   app.all('/mcp', mcp);                      // or app.use('/stores/:store/mcp', mcp)
 *   ...
 *   await mcp.close();                         // on shutdown
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { MemoryStore } from '../store';
import { MCP_REFUSALS, type McpHttpRefusalCode, transportRefusalCode } from './errors';
import { newMcpSessionId } from './ids';
import { createMemoryMcpServer } from './server';
import type { StoreAccess } from './store-access';

/** What the handler needs of a request: node's, or express's (a body parsed upstream is used as is). */
export type McpHttpRequest = IncomingMessage & { body?: unknown };

/** Where a request may go: the store (by id, reached per call) and who asks. */
export interface McpTarget {
  /** The store's name: a session answers only on the store it was opened on. */
  storeId: string;
  /** Who asks (a key id): a session answers only to the owner that opened it, and quotas are per owner. */
  owner: string;
  /** Runs one task on the store, which is opened for it if need be. */
  use: StoreAccess;
}

export interface McpHttpHandlerOptions<Req extends McpHttpRequest = McpHttpRequest> {
  /**
   * Where this request may go, or null when it may not use any store (the request gets a 404 and learns
   * nothing). Called for every request, so a key revoked mid-session stops working at once.
   */
  resolveTarget?: (req: Req) => Promise<McpTarget | null>;
  /**
   * The simpler form: the open store this request may use, or null. Every request then has one owner, and
   * a session lives as long as that store object.
   */
  resolveStore?: (req: Req) => Promise<MemoryStore | null>;
  /** Open sessions at most, all owners together (default 1000). */
  maxSessions?: number;
  /**
   * Open sessions at most per owner (default 16). An owner at its quota, or finding the whole pool full,
   * has its own longest-idle session without a call running closed to make room; never another owner's.
   */
  maxSessionsPerOwner?: number;
  /** A session with no request for this long is closed (default 30 minutes); its client must initialise again. */
  idleTimeoutMs?: number;
  /** Largest request body in bytes (default 16 MiB); larger ones get 413 and are not read. */
  maxRequestBytes?: number;
  /**
   * A body the handler reads itself (none was parsed upstream) must arrive within this long (default
   * 30 s), else 408. A request counts as running in its session only once its body is in.
   */
  bodyTimeoutMs?: number;
  /**
   * Whether an owner may still use its sessions (e.g. its key is not revoked), checked every
   * `ownerCheckMs` for the owners with open sessions: an owner no longer valid has its sessions closed,
   * event streams included.
   */
  ownerValid?: (owner: string) => Promise<boolean>;
  /** How often ownerValid is asked (default 2 s). */
  ownerCheckMs?: number;
  /** Offer the memory files as memory:// resources (default true). */
  resources?: boolean;
  /**
   * For the request that opens a session: the server key it came with (recorded on every commit of the
   * session as `Memory-Key`) and a check asked before each tool call, with the store held for the call
   * (see createMemoryMcpServer).
   */
  sessionOptions?: (req: Req) => { key?: string; review?: 'off' | 'flagged' | 'all'; refuse?: (args: unknown, store: MemoryStore) => Promise<string | null> };
  /** Where internal failures are reported (default: stderr). */
  log?: (message: string) => void;
}

export interface McpHttpHandler<Req extends McpHttpRequest = McpHttpRequest> {
  (req: Req, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** Open sessions now. */
  readonly sessionCount: number;
  /** Close every session and stop the timers. */
  close(): Promise<void>;
}

const DEFAULT_MAX_SESSIONS = 1000;
const DEFAULT_MAX_SESSIONS_PER_OWNER = 16;
const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;
const DEFAULT_OWNER_CHECK_MS = 2000;

interface Session {
  id: string;
  storeId: string;
  owner: string;
  mcp: McpServer;
  transport: StreamableHTTPServerTransport;
  lastActive: number;
  /** POST and DELETE requests under way, counted once their body is in (an open GET stream does not keep a session busy). */
  running: number;
}

export function createMcpHttpHandler<Req extends McpHttpRequest = McpHttpRequest>(
  options: McpHttpHandlerOptions<Req>,
): McpHttpHandler<Req> {
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const maxPerOwner = options.maxSessionsPerOwner ?? DEFAULT_MAX_SESSIONS_PER_OWNER;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const log = options.log ?? ((message: string) => process.stderr.write(`memgit: ${message}\n`));
  for (const [name, value] of Object.entries({ maxSessions, maxSessionsPerOwner: maxPerOwner, maxRequestBytes })) {
    if (!(Number.isSafeInteger(value) && value > 0)) throw new TypeError(`${name} must be a positive integer`);
  }
  if (!(idleTimeoutMs > 0)) throw new TypeError('idleTimeoutMs must be positive');
  if (!(bodyTimeoutMs > 0)) throw new TypeError('bodyTimeoutMs must be positive');
  const resolve = targetResolver(options);
  const sessions = new Map<string, Session>();
  /** Sessions being opened (an initialize under way), per owner: they count against the quotas too. */
  const opening = new Map<string, number>();
  let openingTotal = 0;
  let closed = false;

  const closeSession = async (session: Session): Promise<void> => {
    sessions.delete(session.id);
    await session.mcp.close().catch((error: Error) => log(`closing MCP session ${session.id}: ${error.message}`));
  };

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const session of sessions.values()) {
        if (session.running === 0 && now - session.lastActive > idleTimeoutMs) void closeSession(session);
      }
    },
    Math.min(idleTimeoutMs, 60_000),
  );
  sweep.unref();

  let checking = false;
  const ownerCheck = options.ownerValid
    ? setInterval(() => {
        if (checking) return;
        checking = true;
        void checkOwners(options.ownerValid!)
          .catch((error: unknown) => log(`checking MCP session owners: ${error instanceof Error ? error.message : String(error)}`))
          .finally(() => (checking = false));
      }, options.ownerCheckMs ?? DEFAULT_OWNER_CHECK_MS)
    : null;
  ownerCheck?.unref();

  /** Close the sessions of every owner that is no longer valid. */
  const checkOwners = async (valid: (owner: string) => Promise<boolean>): Promise<void> => {
    const owners = new Set([...sessions.values()].map((s) => s.owner));
    for (const owner of owners) {
      if (await valid(owner)) continue;
      await Promise.all([...sessions.values()].filter((s) => s.owner === owner).map(closeSession));
    }
  };

  /** The longest-idle of these sessions that is not running a call. */
  const longestIdle = (candidates: Iterable<Session>): Session | undefined => {
    let oldest: Session | undefined;
    for (const session of candidates) {
      if (session.running === 0 && (!oldest || session.lastActive < oldest.lastActive)) oldest = session;
    }
    return oldest;
  };

  /**
   * Room for one more session of `owner`: closes the owner's own longest-idle session when the owner is
   * at its quota or the pool is full. Never closes another owner's session.
   */
  const makeRoom = (owner: string): 'ok' | 'owner-full' | 'full' => {
    const own = [...sessions.values()].filter((s) => s.owner === owner);
    const ownerFull = own.length + (opening.get(owner) ?? 0) >= maxPerOwner;
    const poolFull = sessions.size + openingTotal >= maxSessions;
    if (!ownerFull && !poolFull) return 'ok';
    const victim = longestIdle(own);
    if (!victim) return ownerFull ? 'owner-full' : 'full';
    void closeSession(victim);
    return 'ok';
  };

  /** Hand a request to a session's transport, keeping its activity up to date. */
  const serve = async (session: Session, req: Req, res: ServerResponse, body: unknown): Promise<void> => {
    const counts = req.method !== 'GET';
    session.lastActive = Date.now();
    if (counts) session.running++;
    res.once('close', () => {
      session.lastActive = Date.now();
      if (counts) session.running--;
    });
    await session.transport.handleRequest(req, res, body);
  };

  const openSession = async (target: McpTarget, req: Req, res: ServerResponse, body: unknown): Promise<void> => {
    const id = newMcpSessionId();
    const mcp = createMemoryMcpServer({ store: target.use, session: id, resources: options.resources, log, ...options.sessionOptions?.(req) });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      maxRequestBodySize: maxRequestBytes,
      onsessioninitialized: () => {
        if (!closed) sessions.set(id, session);
      },
    });
    codeTransportErrors(transport);
    const session: Session = { id, storeId: target.storeId, owner: target.owner, mcp, transport, lastActive: Date.now(), running: 0 };
    opening.set(target.owner, (opening.get(target.owner) ?? 0) + 1);
    openingTotal++;
    try {
      await mcp.connect(transport);
      mcp.server.onclose = () => {
        if (sessions.get(id) === session) sessions.delete(id);
      };
      await serve(session, req, res, body);
    } finally {
      openingTotal--;
      const left = (opening.get(target.owner) ?? 1) - 1;
      if (left > 0) opening.set(target.owner, left);
      else opening.delete(target.owner);
    }
    // Not an initialize request (the transport answered 400), or the initialize failed: nothing to keep.
    if (sessions.get(id) !== session) await mcp.close();
  };

  const handle = async (req: Req, res: ServerResponse): Promise<void> => {
    if (closed) return sendError(res, 'shutting_down', 'The MCP endpoint is shutting down');
    const target = await resolve(req);
    if (!target) return sendError(res, 'not_found', 'Not found');
    // The body is in before the request counts as running anywhere (a session, the pool, its store).
    let body = req.body;
    if (req.method === 'POST' && body === undefined && isJson(req)) {
      const read = await readJsonBody(req, res, maxRequestBytes, bodyTimeoutMs);
      if (!read.ok) return;
      body = read.body;
    }
    const header = req.headers['mcp-session-id'];
    if (header !== undefined) {
      const session = typeof header === 'string' ? sessions.get(header) : undefined;
      // A session answers only on the store it was opened on, and only to the owner who opened it.
      if (!session || session.storeId !== target.storeId || session.owner !== target.owner) return sendError(res, 'session_not_found', 'Session not found');
      return serve(session, req, res, body);
    }
    if (req.method !== 'POST') return sendError(res, 'session_required', 'Bad Request: Mcp-Session-Id header is required');
    const room = makeRoom(target.owner);
    if (room === 'owner-full') {
      res.setHeader('Retry-After', '5');
      return sendError(res, 'too_many_sessions_per_key', `Too many open MCP sessions for this key (${maxPerOwner}), all of them busy; try again later`);
    }
    if (room === 'full') {
      res.setHeader('Retry-After', '30');
      return sendError(res, 'too_many_sessions', 'Too many open MCP sessions; try again later');
    }
    return openSession(target, req, res, body);
  };

  const handler = ((req: Req, res: ServerResponse, next?: (error?: unknown) => void) => {
    handle(req, res)
      .catch((error: unknown) => {
        log(`MCP request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        if (!res.headersSent) sendError(res, 'internal_error', 'Internal error');
        else if (next) next(error);
        else res.end();
      })
      .catch((error: unknown) => {
        // Answering the failure failed too (the connection went away): nothing is left to tell the client.
        log(`MCP request failed, and so did its error answer: ${error instanceof Error ? error.message : String(error)}`);
        res.destroy();
      });
  }) as McpHttpHandler<Req>;
  Object.defineProperty(handler, 'sessionCount', { get: () => sessions.size });
  handler.close = async () => {
    closed = true;
    clearInterval(sweep);
    if (ownerCheck) clearInterval(ownerCheck);
    await Promise.all([...sessions.values()].map(closeSession));
  };
  return handler;
}

function targetResolver<Req extends McpHttpRequest>(options: McpHttpHandlerOptions<Req>): (req: Req) => Promise<McpTarget | null> {
  if (options.resolveTarget) return options.resolveTarget;
  const resolveStore = options.resolveStore;
  if (!resolveStore) throw new TypeError('createMcpHttpHandler needs resolveTarget or resolveStore');
  return async (req) => {
    const store = await resolveStore(req);
    return store && { storeId: store.dir, owner: '', use: (task) => task(store) };
  };
}

/** The media type is JSON (as the transport decides; anything else it answers 415 without reading). */
function isJson(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  return type === 'application/json';
}

/**
 * Read and parse a JSON body of at most `maxBytes` within `timeoutMs`. When it cannot, the request has
 * been answered (413, 408, 400) or has gone, and the connection is closed.
 */
function readJsonBody(req: IncomingMessage, res: ServerResponse, maxBytes: number, timeoutMs: number): Promise<{ ok: true; body: unknown } | { ok: false }> {
  return new Promise((resolve) => {
    const refuse = (code: McpHttpRefusalCode, message: string) => {
      finish();
      res.setHeader('Connection', 'close');
      res.once('finish', () => req.socket.destroy());
      sendError(res, code, message);
      resolve({ ok: false });
    };
    const declared = Number(req.headers['content-length']);
    if (declared > maxBytes) return refuse('body_too_large', `Payload Too Large: Request body must not exceed ${maxBytes} bytes`);
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) return refuse('body_too_large', `Payload Too Large: Request body must not exceed ${maxBytes} bytes`);
      chunks.push(chunk);
    };
    const onEnd = () => {
      finish();
      try {
        resolve({ ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        sendError(res, 'invalid_json', 'Parse error: Invalid JSON');
        resolve({ ok: false });
      }
    };
    const onGone = () => {
      finish();
      resolve({ ok: false });
    };
    const timer = setTimeout(() => refuse('body_timeout', `Request Timeout: the body did not arrive within ${timeoutMs / 1000} s`), timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onGone);
    req.once('close', onGone);
  });
}

/** A JSON-RPC error response (the body clients of the transport expect), with no request id; its code in error.data.code. */
function sendError(res: ServerResponse, code: McpHttpRefusalCode, message: string): void {
  const { rpc, status } = MCP_REFUSALS[code];
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: rpc, message, data: { code } }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

type JsonErrorFactory = (status: number, code: number, message: string, options?: { data?: unknown; headers?: Record<string, string> }) => Response;

/**
 * The SDK's transport answers some refusals itself (406 for an Accept header without event streams, 415,
 * a missing or unknown session, a message that is not JSON-RPC): give them `error.data.code` too, as every
 * JSON-RPC error memgit sends has. The transport makes those answers in one method of its web-standard
 * core (createJsonErrorResponse); test/mcp/http.test.ts fails if a version of the SDK stops doing so.
 */
function codeTransportErrors(transport: StreamableHTTPServerTransport): void {
  const core = (transport as unknown as { _webStandardTransport?: { createJsonErrorResponse?: JsonErrorFactory } })._webStandardTransport;
  const original = core?.createJsonErrorResponse;
  if (!core || typeof original !== 'function') return;
  core.createJsonErrorResponse = function (status, code, message, options) {
    const given = options?.data;
    const data = given === undefined ? {} : typeof given === 'object' && given !== null && !Array.isArray(given) ? given : { detail: given };
    return original.call(this, status, code, message, { ...options, data: { ...data, code: transportRefusalCode(status, code) } });
  };
}
