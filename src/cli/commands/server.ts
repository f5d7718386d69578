import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { McpTarget } from '../../mcp/http';
import type { StoreAccess } from '../../mcp/store-access';
import type { ServerAppOptions, StoreUi } from '../../server/app';
import type { MemoryStore } from '../../store/memory-store';
import type { KeyInfo } from '../../tenancy/keys';
import { fail, positiveInteger } from '../options';

export const DEFAULT_ROOT = 'memories-repo';

interface ServerCliOptions {
  root: string;
  host: string;
  port: number;
  allowedHost: string[];
  maxOpenStores: number;
  idleSeconds: number;
  maxQueue: number;
  rateLimit: number;
  bodyLimit: string;
  bodyBudget: string;
  keyBodyBudget: string;
  keyMaxBodies: number;
  bodyTimeout: number;
  mcpMaxSessions: number;
  mcpSessionsPerKey: number;
  maxStoresPerKey: number;
  maxStoreBytes: number;
  cacheSize: number;
}

export function registerServer(program: Command): void {
  program
    .command('server')
    .summary('serve many stores over HTTP: the memory tool API, the JSON read API and the audit UI')
    .description(
      'One service for every store under --root (one subfolder each, created by its first memory call when the key allows it). ' +
        'Clients authenticate with keys from `memgit keys create`. The audit UI lists the stores at / (the browser asks for a key as ' +
        'the password) and shows each one under /stores/{store}/. One JSON log line per request on stdout; SIGTERM stops gracefully.',
    )
    .addHelpText(
      'after',
      '\nEndpoints:\n' +
        '  POST /api/v1/stores/{store}/tool-calls  {"tool_use": {...}, "session": "..."}  (write keys)\n' +
        '  GET  /api/v1/stores/{store}/commits, /sessions, /files/...                    (read keys)\n' +
        '  POST /api/v1/stores/{store}/rollback/{revert|restore|session|reset}           (operator keys)\n' +
        '  POST|GET|DELETE /stores/{store}/mcp   MCP (Streamable HTTP), the memory tool  (write keys)\n' +
        '  GET  /healthz',
    )
    .option('--root <dir>', 'the folder holding the stores', DEFAULT_ROOT)
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8080)
    .option('--allowed-host <name>', 'a host name the UI answers to besides loopback and --host (behind a reverse proxy); repeatable', collect, [])
    .option('--max-open-stores <n>', 'stores kept open at once (least recently used are closed)', positiveInteger, 256)
    .option('--idle-seconds <n>', 'close a store unused for this long', positiveInteger, 60)
    .option('--max-queue <n>', 'calls in flight per store before answering 503', positiveInteger, 64)
    .option('--rate-limit <n>', 'requests per key per minute, REST and MCP (an MCP batch counts each message; 0 = unlimited)', nonNegativeInteger, 1200)
    .option('--body-limit <size>', 'largest request body, REST and MCP (e.g. 512kb, 8mb)', parseSize, '8mb')
    .option('--body-budget <size>', 'request bodies held in memory at once, all keys together (503 with Retry-After beyond)', parseSize, '128mb')
    .option('--key-body-budget <size>', 'request bodies held in memory at once per key (429 with Retry-After beyond)', parseSize, '32mb')
    .option('--key-max-bodies <n>', 'requests with a body in flight at once per key (429 with Retry-After beyond)', positiveInteger, 64)
    .option('--body-timeout <seconds>', 'a request body must arrive within this long (408 beyond)', positiveInteger, 30)
    .option('--mcp-max-sessions <n>', 'open MCP sessions, all keys together (503 beyond)', positiveInteger, 1000)
    .option('--mcp-sessions-per-key <n>', "open MCP sessions per key; a key's own longest-idle session makes room (429 when all are busy)", positiveInteger, 16)
    .option('--max-stores-per-key <n>', 'stores one key may create (0 = unlimited)', nonNegativeInteger, 1000)
    .option('--max-store-bytes <size>', 'a store this large on disk takes no more writes (e.g. 512mb, 1gb; 0 = unlimited)', parseByteCount, 1024 * 1024 * 1024)
    .option('--cache-size <size>', 'memory all open stores and their UI may use for caches, together (e.g. 128mb, 1gb)', parsePositiveByteCount, 256 * 1024 * 1024)
    .action(async (options: ServerCliOptions) => {
      await runServer(options);
    });
}

async function runServer(options: ServerCliOptions): Promise<void> {
  const root = path.resolve(options.root);
  if (fs.existsSync(path.join(root, '.git'))) {
    fail(`${root} is a single store, not a server root; serve it with \`memgit serve --repo ${options.root}\` or pick another --root`);
  }
  const { startServer } = require('../../server/server') as typeof import('../../server/server');
  const { MIN_TOKEN_LENGTH, newOperatorToken } = require('../../web/auth') as typeof import('../../web/auth');
  const fromEnv = process.env.MEMGIT_TOKEN;
  if (fromEnv !== undefined && fromEnv.length < MIN_TOKEN_LENGTH) fail(`MEMGIT_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters`);
  const token = fromEnv ?? newOperatorToken();
  const bytes = { bodyLimit: sizeBytes(options.bodyLimit), bodyBudget: sizeBytes(options.bodyBudget), keyBodyBudget: sizeBytes(options.keyBodyBudget) };
  if (bytes.keyBodyBudget < bytes.bodyLimit) fail(`--key-body-budget (${options.keyBodyBudget}) must hold at least one body of --body-limit (${options.bodyLimit})`);
  if (bytes.bodyBudget < bytes.keyBodyBudget) fail(`--body-budget (${options.bodyBudget}) must be at least --key-body-budget (${options.keyBodyBudget})`);
  const { CacheBudget } = require('../../store/cache-budget') as typeof import('../../store/cache-budget');
  // One budget for the caches of every open store and of its audit UI: memory does not grow with the
  // number of stores one key opens (docs/reliability.md has the whole bound).
  const cacheBudget = new CacheBudget(options.cacheSize);
  const ui = storeUi(token, [options.host, ...options.allowedHost], cacheBudget);
  const mcp = mcpMount({ maxSessions: options.mcpMaxSessions, maxSessionsPerOwner: options.mcpSessionsPerKey, bodyTimeoutMs: options.bodyTimeout * 1000 });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      root,
      host: options.host,
      port: options.port,
      ui,
      mount: mcp.mount,
      bodyLimit: options.bodyLimit,
      bodies: { totalBytes: bytes.bodyBudget, perKeyBytes: bytes.keyBodyBudget, perKeyRequests: options.keyMaxBodies, timeoutMs: options.bodyTimeout * 1000 },
      rateLimitPerMinute: options.rateLimit,
      guardProcess: true,
      stores: {
        maxOpen: options.maxOpenStores,
        idleMs: options.idleSeconds * 1000,
        maxQueue: options.maxQueue,
        maxStoresPerKey: options.maxStoresPerKey,
        maxStoreBytes: options.maxStoreBytes,
        storeOptions: { cacheBudget },
      },
    });
  } catch (error) {
    if ((error as Error).name === 'UnsafeRootError') fail(`refusing to serve ${root}: ${(error as Error).message}`);
    fail(`cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`);
  }
  process.stderr.write(`memgit: server for the stores in ${root} at ${server.url}/ (SIGTERM or Ctrl-C to stop)\n`);
  if (fromEnv === undefined) process.stderr.write(`memgit: operator token for rollbacks in the UI (log in at ${server.url}/stores/<store>/login): ${token}\n`);
  const stop = (signal: string) => {
    process.stderr.write(`memgit: ${signal}: finishing the calls in flight, then closing the stores\n`);
    // MCP sessions hold open event streams: close them first, or the HTTP server never finishes closing.
    mcp.close().then(() => server.close()).then(
      () => process.exit(0),
      (error: Error) => {
        process.stderr.write(`memgit: error while stopping: ${error.message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

/**
 * MCP's Streamable HTTP transport per store, at /stores/{store}/mcp behind the server's keys (write scope),
 * within the server's limits: every JSON-RPC message counts against the key's rate limit (a batch counts
 * each of its messages), bodies are read within --body-limit and the body budgets before anything else
 * happens, and a session belongs to the key that opened it. A session reaches its store through the
 * registry per call, so a call holds the store (a queue slot, a place in the LRU) only while it runs. A
 * store that does not exist yet is created only by an accepted memory tool call of a key that may create
 * stores, within its bound of stores (a session may be opened on it only while the key could create it);
 * initialize, resource reads and refused requests write nothing. Every commit of a session records the key
 * that opened it (`Memory-Key`), and a write to a store past `--max-store-bytes` is refused. A revoked
 * key's sessions are closed.
 */
function mcpMount(limits: { maxSessions: number; maxSessionsPerOwner: number; bodyTimeoutMs: number }): {
  mount: NonNullable<ServerAppOptions['mount']>;
  close: () => Promise<void>;
} {
  const { createMcpHttpHandler } = require('../../mcp/http') as typeof import('../../mcp/http');
  const { StoreUnavailableError } = require('../../mcp/store-access') as typeof import('../../mcp/store-access');
  const { QueueFullError, RegistryClosedError, StoreFullError, StoreIdTakenError, StoreNotFoundError } = require('../../tenancy/registry') as typeof import('../../tenancy/registry');
  const { StoreQuotaError } = require('../../tenancy/creators') as typeof import('../../tenancy/creators');
  const { InvalidStoreIdError } = require('../../tenancy/store-id') as typeof import('../../tenancy/store-id');
  const { NotAStoreError } = require('../../store/errors') as typeof import('../../store/errors');
  type Refuse = (args: unknown, store: MemoryStore) => Promise<string | null>;
  type McpRequest = Request & { memgitMcpTarget?: McpTarget; memgitMcpRefuse?: Refuse };
  let keyIsLive: (id: string) => Promise<boolean> = async () => true;
  const handler = createMcpHttpHandler<McpRequest>({
    resolveTarget: async (req) => req.memgitMcpTarget ?? null,
    ...limits,
    ownerValid: (owner) => keyIsLive(owner),
    // The session's key (its owner: no other key reaches it) goes on every commit it makes.
    sessionOptions: (req) => ({ key: req.memgitKey?.id, refuse: req.memgitMcpRefuse }),
    log: (message) => process.stderr.write(`memgit: mcp: ${message}\n`),
  });
  /** What the model is told when the registry cannot give the store to a call (nothing ran, nothing was written). */
  const unavailable = (error: unknown): unknown => {
    if (error instanceof QueueFullError) return new StoreUnavailableError(`the memory store is busy (too many calls in flight); try again in ${error.retryAfterSeconds} s.`);
    if (error instanceof StoreNotFoundError) return new StoreUnavailableError('the memory store does not exist.', true);
    if (error instanceof RegistryClosedError) return new StoreUnavailableError('the memory store is shutting down.');
    if (error instanceof StoreQuotaError) {
      return new StoreUnavailableError(`the memory store does not exist, and this key may not create it: it has created ${error.limit} stores, the most one key may (--max-stores-per-key ${error.limit}).`, true);
    }
    if (error instanceof StoreIdTakenError) return new StoreUnavailableError(`the memory store cannot be created: store ${JSON.stringify(error.existing)} exists, and ids that differ only in case name one folder on some file systems.`, true);
    if (error instanceof InvalidStoreIdError) return new StoreUnavailableError(`the memory store cannot be created: ${error.message}.`, true);
    if (error instanceof NotAStoreError) return new StoreUnavailableError('the folder of this memory store holds something that is not a memgit store.');
    return error;
  };
  return {
    mount: (app, { authorizer, registry, rateLimit, jsonBody }) => {
      keyIsLive = (id) => authorizer.keyIsLive(id);
      // Only an accepted tool call may create the store (and only for a key that may create stores).
      const storeAccess = (id: string, key: KeyInfo): StoreAccess => (task, use) =>
        registry.use(id, { create: key.create && use?.toolCall === true, key: key.id }, task).catch((error: unknown) => {
          throw unavailable(error);
        });
      /** Writes to a store at --max-store-bytes are refused with a tool error (views still work). */
      const room = (id: string): Refuse => async (args, store) => {
        if (isView(args)) return null;
        try {
          await registry.assertRoom(id, store);
          return null;
        } catch (error) {
          if (!(error instanceof StoreFullError)) throw error;
          return `Error: this memory store is full (${error.bytes} bytes on disk; the server allows ${error.limit}). Nothing was written; view still works.`;
        }
      };
      app.all(
        '/stores/:store/mcp',
        authorizer.middleware('write'),
        rateLimit(),
        (req: Request, res: Response, next: NextFunction) => (req.method === 'POST' ? jsonBody(req, res, next) : next()),
        rateLimit((req) => (Array.isArray(req.body) ? req.body.length - 1 : 0)),
        (req: McpRequest, res: Response, next: NextFunction) => {
          const id = String(req.params.store);
          const key = req.memgitKey!;
          const opensSession = req.method === 'POST' && req.headers['mcp-session-id'] === undefined;
          const reachable = async (): Promise<boolean> => {
            if (!opensSession && key.create) return true;
            if (await registry.exists(id)) return true;
            if (!key.create) return false;
            // A session on a store that does not exist yet: only while this key could create it (its first
            // tool call will); an id it may not create, or a key at its bound of stores, is refused now.
            await registry.assertCreatable(id, key.id);
            return true;
          };
          reachable().then((ok) => {
            if (!ok) return next(new StoreNotFoundError(id));
            req.memgitMcpTarget = { storeId: id, owner: key.id, use: storeAccess(id, key) };
            req.memgitMcpRefuse = room(id);
            handler(req, res, next);
          }, next);
        },
      );
    },
    close: () => handler.close(),
  };
}

function isView(args: unknown): boolean {
  return typeof args === 'object' && args !== null && (args as { command?: unknown }).command === 'view';
}

/** The web audit UI, composed per store (the server edge itself never imports the web edge). */
export function storeUi(token: string, allowedHosts: string[], cacheBudget?: import('../../store/cache-budget').CacheBudget): StoreUi {
  const express = require('express') as typeof import('express');
  const { createApp, createViews, findViewsDir } = require('../../web/app') as typeof import('../../web/app');
  const { rollbackRoutes } = require('../../web/routes/rollback') as typeof import('../../web/routes/rollback');
  const { hostCheck, securityHeaders } = require('../../web/security') as typeof import('../../web/security');
  // One rollback module for every store: one operator login (cookie) is valid across the stores. Failed
  // logins count per key (every request here carries one): one key cannot lock out another key or the
  // operator, and the server's own rollback requests (for operator keys) are never locked out.
  const rollback = rollbackRoutes({
    token,
    failureKey: (req) => (req.memgitServerOperator ? null : req.memgitKey ? `key:${req.memgitKey.id}` : `address:${req.socket.remoteAddress ?? 'unknown'}`),
    keyOf: (req) => req.memgitKey?.id,
  });
  const viewsDir = findViewsDir();
  const views = createViews(viewsDir);
  const storeViews = createViews(viewsDir);
  let readOnlyViews: ReturnType<typeof createViews> | undefined;
  const rootApp = express();
  rootApp.disable('x-powered-by');
  rootApp.use(hostCheck(allowedHosts), securityHeaders());
  rootApp.use('/static', express.static(path.join(viewsDir, 'static'), { maxAge: '1h', index: false }));
  return {
    operatorToken: token,
    // One template environment for the UIs of all writable stores (the same routes everywhere), and one for
    // read-only ones (the route modules set globals from that): compiled once, not per store.
    forStore: (store, storeId) =>
      createApp({
        store,
        allowedHosts,
        routes: [rollback],
        serverStore: { id: storeId, listUrl: '/' },
        command: 'memgit server',
        cacheBudget,
        views: store.readOnly ? (readOnlyViews ??= createViews(viewsDir)) : storeViews,
      }) as unknown as RequestHandler,
    root: (stores) => async (req, res, next) => {
      if (req.path !== '/') return rootApp(req, res, next);
      // Rendered first (awaited in this handler), so that a failure reaches the server's error handler.
      const html = views.render('pages/stores.njk', { stores: await stores() });
      rootApp(req, res, (error?: unknown) => (error ? next(error) : res.type('html').send(html)));
    },
  };
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('expected an integer from 0 to 65535');
  return port;
}

function parseSize(value: string): string {
  if (!/^[1-9]\d*(b|kb|mb)?$/i.test(value.trim())) throw new InvalidArgumentError('expected a size such as 512kb or 8mb');
  return value.trim().toLowerCase();
}

function sizeBytes(size: string): number {
  const match = /^(\d+)(b|kb|mb)?$/.exec(size)!;
  return Number(match[1]) * { b: 1, kb: 1024, mb: 1024 * 1024 }[(match[2] ?? 'b') as 'b' | 'kb' | 'mb'];
}

/** A size in bytes: 512kb, 8mb, 1gb, a plain number of bytes, or 0 (no bound). */
function parseByteCount(value: string): number {
  const match = /^(\d+)(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) throw new InvalidArgumentError('expected a size such as 512mb or 1gb (0: no bound)');
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  const bytes = Number(match[1]) * unit;
  if (!Number.isSafeInteger(bytes)) throw new InvalidArgumentError('too large');
  return bytes;
}

function parsePositiveByteCount(value: string): number {
  const bytes = parseByteCount(value);
  if (bytes === 0) throw new InvalidArgumentError('expected a size above 0, such as 256mb');
  return bytes;
}

function nonNegativeInteger(value: string): number {
  return value.trim() === '0' ? 0 : positiveInteger(value);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
