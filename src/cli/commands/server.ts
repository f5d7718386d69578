import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ServerAppOptions, StoreUi } from '../../server/app';
import type { MemoryStore } from '../../store/memory-store';
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
    .option('--rate-limit <n>', 'requests per key per minute (0 = unlimited)', nonNegativeInteger, 1200)
    .option('--body-limit <size>', 'largest request body (e.g. 512kb, 8mb)', parseSize, '8mb')
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
  const { CacheBudget } = require('../../store/cache-budget') as typeof import('../../store/cache-budget');
  // One budget for the caches of every open store and of its audit UI: memory does not grow with the
  // number of stores one key opens (docs/reliability.md has the whole bound).
  const cacheBudget = new CacheBudget(options.cacheSize);
  const ui = storeUi(token, [options.host, ...options.allowedHost], cacheBudget);
  const mcp = mcpMount(options.bodyLimit);
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      root,
      host: options.host,
      port: options.port,
      ui,
      mount: mcp.mount,
      bodyLimit: options.bodyLimit,
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
 * MCP's Streamable HTTP transport per store, at /stores/{store}/mcp behind the server's keys (write scope).
 * The store stays in use in the registry (neither evicted nor closed) for as long as each request, event
 * streams included, is open. A store that does not exist yet is created only for a well-formed
 * `initialize` of a key that may create stores (counted against the key's rate limit and its bound of
 * stores): any other request to it is answered 404 and writes nothing. Every commit of a session records
 * the key it was opened with (`Memory-Key`), and a write to a store past `--max-store-bytes` is refused.
 */
function mcpMount(bodyLimit: string): { mount: NonNullable<ServerAppOptions['mount']>; close: () => Promise<void> } {
  const express = require('express') as typeof import('express');
  const { createMcpHttpHandler } = require('../../mcp/http') as typeof import('../../mcp/http');
  const { StoreFullError } = require('../../stores/registry') as typeof import('../../stores/registry');
  type McpRequest = Request & { memgitMcpStore?: MemoryStore; memgitMcpRoom?: (args: unknown) => Promise<string | null> };
  const handler = createMcpHttpHandler<McpRequest>({
    resolveStore: async (req) => req.memgitMcpStore ?? null,
    sessionOptions: (req) => ({ key: req.memgitKey?.id, refuse: req.memgitMcpRoom }),
    log: (message) => process.stderr.write(`memgit: mcp: ${message}\n`),
  });
  const json = express.json({ limit: bodyLimit, strict: true, type: () => true });
  /** Parse the body here (only for a store that does not exist yet): the transport takes req.body as it is. */
  const readBody = (req: McpRequest, res: Response) =>
    new Promise<void>((resolve, reject) => json(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
  return {
    mount: (app, { authorizer, registry, withinLimit }) => {
      app.all('/stores/:store/mcp', (req: McpRequest, res: Response, next: NextFunction) => {
        const id = String(req.params.store);
        const serve = async () => {
          const key = await authorizer.authorize(req, id, 'write');
          let create = false;
          if (key.create && !(await registry.exists(id))) {
            if (req.method !== 'POST' || req.headers['mcp-session-id'] !== undefined || !req.is('application/json')) return next(notFound(id));
            await readBody(req, res);
            if (!isInitialize(req.body)) return next(notFound(id));
            if (!(await withinLimit(req, res))) return;
            create = true;
          }
          await registry.use(id, { create, key: key.id }, (store) =>
            new Promise<void>((resolve) => {
              req.memgitMcpStore = store;
              req.memgitMcpRoom = async (args) => {
                if (isView(args)) return null;
                try {
                  await registry.assertRoom(id, store);
                  return null;
                } catch (error) {
                  if (!(error instanceof StoreFullError)) throw error;
                  return `Error: this memory store is full (${error.bytes} bytes on disk; the server allows ${error.limit}). Nothing was written; view still works.`;
                }
              };
              res.once('close', () => resolve());
              handler(req, res, next);
            }),
          );
        };
        serve().catch(next);
      });
    },
    close: () => handler.close(),
  };
}

/** A single JSON-RPC `initialize` request (the only request that may bring a new store into being). */
function isInitialize(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as Record<string, unknown>;
  return message.jsonrpc === '2.0' && message.method === 'initialize' && (typeof message.id === 'string' || typeof message.id === 'number');
}

function isView(args: unknown): boolean {
  return typeof args === 'object' && args !== null && (args as { command?: unknown }).command === 'view';
}

function notFound(id: string): Error {
  const { StoreNotFoundError } = require('../../stores/registry') as typeof import('../../stores/registry');
  return new StoreNotFoundError(id);
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
  const rootApp = express();
  rootApp.disable('x-powered-by');
  rootApp.use(hostCheck(allowedHosts), securityHeaders());
  rootApp.use('/static', express.static(path.join(viewsDir, 'static'), { maxAge: '1h', index: false }));
  return {
    operatorToken: token,
    // One template environment for every store's UI (the same routes everywhere): compiled once, not per store.
    forStore: (store) => createApp({ store, allowedHosts, routes: [rollback], cacheBudget, views: storeViews }) as unknown as RequestHandler,
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
