/**
 * The memory tool over MCP's Streamable HTTP transport, as an express-mountable handler: stateful
 * sessions keyed by `Mcp-Session-Id`, each bound to the store it was opened on and recorded as one memgit
 * session. Authentication is the mounting server's job (resolveStore answers null for a request that
 * may not reach a store); sessions are bounded in number and closed when idle.
 *
 *   const mcp = createMcpHttpHandler({ resolveStore: async (req) => storeFor(req) });
 *   app.all('/mcp', mcp);                      // or app.use('/stores/:store/mcp', mcp)
 *   ...
 *   await mcp.close();                         // on shutdown
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { MemoryStore } from '../store/memory-store';
import { newMcpSessionId } from './ids';
import { createMemoryMcpServer } from './server';

/** What the handler needs of a request: node's, or express's (a body parsed upstream is used as is). */
export type McpHttpRequest = IncomingMessage & { body?: unknown };

export interface McpHttpHandlerOptions<Req extends McpHttpRequest = McpHttpRequest> {
  /**
   * The store this request may use, or null when it may not use any (the request gets a 404 and learns
   * nothing). Called for every request, so a key revoked mid-session stops working at once.
   */
  resolveStore: (req: Req) => Promise<MemoryStore | null>;
  /** Open sessions at most (default 100); when full, the longest-idle session without a call running is closed. */
  maxSessions?: number;
  /** A session with no request for this long is closed (default 30 minutes); its client must initialise again. */
  idleTimeoutMs?: number;
  /** Largest request body in bytes (default 16 MiB); larger ones get 413 and are not read. */
  maxRequestBytes?: number;
  /** Offer the memory files as memory:// resources (default true). */
  resources?: boolean;
  /**
   * For the request that opens a session: the server key it came with (recorded on every commit of the
   * session as `Memory-Key`) and a check asked before each tool call (see createMemoryMcpServer).
   */
  sessionOptions?: (req: Req) => { key?: string; refuse?: (args: unknown) => Promise<string | null> };
  /** Where internal failures are reported (default: stderr). */
  log?: (message: string) => void;
}

export interface McpHttpHandler<Req extends McpHttpRequest = McpHttpRequest> {
  (req: Req, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** Open sessions now. */
  readonly sessionCount: number;
  /** Close every session and stop the idle timer. */
  close(): Promise<void>;
}

const DEFAULT_MAX_SESSIONS = 100;
const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

interface Session {
  id: string;
  store: MemoryStore;
  mcp: McpServer;
  transport: StreamableHTTPServerTransport;
  lastActive: number;
  /** POST and DELETE requests under way (an open GET stream does not keep a session busy). */
  running: number;
}

export function createMcpHttpHandler<Req extends McpHttpRequest = McpHttpRequest>(
  options: McpHttpHandlerOptions<Req>,
): McpHttpHandler<Req> {
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const log = options.log ?? ((message: string) => process.stderr.write(`memgit: ${message}\n`));
  if (!(Number.isSafeInteger(maxSessions) && maxSessions > 0)) throw new TypeError('maxSessions must be a positive integer');
  if (!(idleTimeoutMs > 0)) throw new TypeError('idleTimeoutMs must be positive');
  const sessions = new Map<string, Session>();
  /** Sessions being opened (an initialize under way): they count against maxSessions too. */
  let opening = 0;
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

  /** Room for one more session: closes the longest-idle session that is not running a call, if needed. */
  const makeRoom = (): boolean => {
    if (sessions.size + opening < maxSessions) return true;
    let oldest: Session | undefined;
    for (const session of sessions.values()) {
      if (session.running === 0 && (!oldest || session.lastActive < oldest.lastActive)) oldest = session;
    }
    if (!oldest) return false;
    void closeSession(oldest);
    return true;
  };

  /** Hand a request to a session's transport, keeping its activity up to date. */
  const serve = async (session: Session, req: Req, res: ServerResponse): Promise<void> => {
    const counts = req.method !== 'GET';
    session.lastActive = Date.now();
    if (counts) session.running++;
    res.once('close', () => {
      session.lastActive = Date.now();
      if (counts) session.running--;
    });
    await session.transport.handleRequest(req, res, req.body);
  };

  const openSession = async (store: MemoryStore, req: Req, res: ServerResponse): Promise<void> => {
    const id = newMcpSessionId();
    const mcp = createMemoryMcpServer({ store, session: id, resources: options.resources, log, ...options.sessionOptions?.(req) });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      maxRequestBodySize: maxRequestBytes,
      onsessioninitialized: () => {
        if (!closed) sessions.set(id, session);
      },
    });
    const session: Session = { id, store, mcp, transport, lastActive: Date.now(), running: 0 };
    opening++;
    try {
      await mcp.connect(transport);
      mcp.server.onclose = () => {
        if (sessions.get(id) === session) sessions.delete(id);
      };
      await serve(session, req, res);
    } finally {
      opening--;
    }
    // Not an initialize request (the transport answered 400), or the initialize failed: nothing to keep.
    if (sessions.get(id) !== session) await mcp.close();
  };

  const handle = async (req: Req, res: ServerResponse): Promise<void> => {
    if (closed) return sendError(res, 503, 'The MCP endpoint is shutting down');
    const store = await options.resolveStore(req);
    if (!store) return sendError(res, 404, 'Not found');
    const header = req.headers['mcp-session-id'];
    if (header !== undefined) {
      const session = typeof header === 'string' ? sessions.get(header) : undefined;
      // A session answers only on the store it was opened on, whatever store the caller may use.
      if (!session || session.store !== store) return sendError(res, 404, 'Session not found', -32001);
      return serve(session, req, res);
    }
    if (req.method !== 'POST') return sendError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    if (!makeRoom()) {
      res.setHeader('Retry-After', '30');
      return sendError(res, 503, 'Too many open MCP sessions; try again later');
    }
    return openSession(store, req, res);
  };

  const handler = ((req: Req, res: ServerResponse, next?: (error?: unknown) => void) => {
    handle(req, res)
      .catch((error: unknown) => {
        log(`MCP request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        if (!res.headersSent) sendError(res, 500, 'Internal error', -32603);
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
    await Promise.all([...sessions.values()].map(closeSession));
  };
  return handler;
}

/** A JSON-RPC error response (the body clients of the transport expect), with no request id. */
function sendError(res: ServerResponse, status: number, message: string, code = -32000): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
