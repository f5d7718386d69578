import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import express, { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type * as RateLimiting from 'rate-limiter-flexible';
import type { Logger } from 'pino';
import { rollbackRequest } from '../operator/rollback';
import { asMemoryToolUse, listRemotes, MemgitError, MemoryStore, NotAStoreError, replicationStatus, ReviewRefusedError, StoreClosedError } from '../store';
import { KeyInfo, keyMatchesStore, Scope } from '../tenancy/keys';
import { QueueFullError, RegistryClosedError, StoreNotFoundError, StoreRegistry, StoreSummary } from '../tenancy/registry';
import type { FleetNode } from '../tenancy/fleet';
import { InvalidStoreIdError } from '../tenancy/store-id';
import { Authorizer } from './auth';
import type { DreamJobs } from './dreams';
import { BodyBudget, BodyBudgetOptions, DEFAULT_BODY_BUDGET, parseByteSize } from './body-budget';
import { HttpError, httpErrorOf, notFoundStore, refusal, sendError } from './errors';
import { OPENAPI_DOCUMENT } from './openapi';

// The two classes used, from their own files: the package's index loads every backend it supports (Redis,
// Mongo, SQL, Etcd, …), 21 ms of every server's start against 4 ms for these.
const RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory') as typeof RateLimiting.RateLimiterMemory;
const RateLimiterRes = require('rate-limiter-flexible/lib/RateLimiterRes') as typeof RateLimiting.RateLimiterRes;
type RateLimiterMemory = RateLimiting.RateLimiterMemory;
type RateLimiterRes = RateLimiting.RateLimiterRes;

/**
 * The HTTP edge of a server root: the memory tool over HTTP (`write`), rollbacks (`operator`, run
 * directly on the store by the operator floor, src/operator/), and — when the caller composes them in
 * (src/compose/server.ts does) — the audit UI across stores and its JSON twin, the read API (`read`).
 * Every store route passes through Authorizer.authorize; every request gets one log line.
 */

/**
 * The audit UI and JSON read model of one store, composed in by the caller (src/compose/ mounts the web
 * UI): a handler that serves the UI's paths (`/`, `/commits`, `/api/commits`, ...) for an open store. The
 * server strips `/stores/{id}` (or maps `/api/v1/stores/{id}/...` to `/api/...`) first.
 *
 * What the server tells the UI rides on the request object, which no client can set: `req.memgitKey` is
 * the key it checked (the key itself, in the Authorization header, is consumed: the UI never sees it).
 */
export interface StoreUi {
  /** The handler for one open store (called once per store while it stays open). */
  forStore: (store: MemoryStore, storeId: string) => RequestHandler;
  /** The page listing stores at `/` (and its assets under `/static`). */
  root: (stores: () => Promise<StoreListing>) => RequestHandler;
  /**
   * No longer used: the server's rollback API runs rollbacks itself (src/operator/rollback.ts) instead of
   * presenting a token to the UI. Kept optional so that existing callers still type-check.
   */
  operatorToken?: string;
}

/** A store the list could not describe (too busy, or not a store after all): shown, marked, never fatal. */
export interface UnavailableStore {
  id: string;
  unavailable: string;
}

export type StoreListing = Array<StoreSummary | UnavailableStore>;

export interface ServerAppOptions {
  registry: StoreRegistry;
  authorizer: Authorizer;
  logger: Logger;
  /** Largest request body (default '8mb': a 1 MiB memory file can take ~6 MiB as escaped JSON). */
  bodyLimit?: string;
  /** Requests per key per minute (default 1200; 0 = no limit). */
  rateLimitPerMinute?: number;
  ui?: StoreUi;
  /** Bounds of request bodies in flight, globally and per key, and how long a body may take to arrive. */
  bodies?: Partial<BodyBudgetOptions>;
  /** Extra routes (e.g. MCP), mounted after the tool API and before the audit UI. */
  mount?: (app: Express, tools: MountTools) => void;
  /** True once the server is shutting down: new requests get 503. */
  draining?: () => boolean;
  /** This server is a node of a fleet: writes are acknowledged as its ack mode says (src/tenancy/fleet.ts). */
  fleet?: FleetNode;
  /** Dreams as background jobs (src/server/dreams.ts); without it the dream routes answer 503. */
  dreams?: DreamJobs;
}

/** What the server lends routes mounted into it, so that they obey the same keys and limits. */
export interface MountTools {
  authorizer: Authorizer;
  registry: StoreRegistry;
  /**
   * The per-key rate limit: the request counts `points(req)` requests (nothing when 0), or is answered
   * 429. Mount it after authorization.
   */
  rateLimit: (points?: (req: Request) => number) => RequestHandler;
  /** A JSON body (415 if not JSON) within --body-limit and the body budgets, as the tool API reads it. */
  jsonBody: RequestHandler;
  /** This server is a node of a fleet: a mounted route that writes acknowledges as the tool API does. */
  fleet?: FleetNode;
}

const TOOL_CALL_FIELDS = new Set(['tool_use', 'session']);

export function createServerApp(options: ServerAppOptions): Express {
  const { registry, authorizer, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', false);

  app.use(requestLog(logger));
  app.use(answerHeaders);
  const fleet = options.fleet;
  if (fleet) {
    // Which node answered: for operators behind the load balancer, and the fleet drill.
    app.use((_req, res, next) => {
      res.setHeader('X-Memgit-Node', fleet.node);
      next();
    });
  }
  app.use((req, res, next) => {
    if (!options.draining?.()) return next();
    res.setHeader('Connection', 'close');
    sendError(res, refusal('shutting_down', 'the server is shutting down', { 'Retry-After': '1' }));
  });

  const bodyLimit = options.bodyLimit ?? '8mb';
  const bodyLimitBytes = parseByteSize(bodyLimit);
  if (bodyLimitBytes === null) throw new TypeError(`bodyLimit must be a size such as 8mb, got ${JSON.stringify(bodyLimit)}`);
  const bodies = new BodyBudget({ ...DEFAULT_BODY_BUDGET, ...options.bodies });
  if (bodyLimitBytes > bodies.options.perKeyBytes) throw new TypeError('the per-key body budget must hold at least one body of the largest size (bodyLimit)');
  app.use(bodies.timeout());

  // The OpenAPI document of this API (src/server/openapi.ts, kept in docs/openapi.json): no key needed.
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(OPENAPI_DOCUMENT);
  });

  app.get('/healthz', async (_req, res) => {
    res.json({ status: 'ok', openStores: registry.openCount, replication: await replicationHealth(registry.openStores()), ...(fleet ? { fleet: fleet.health() } : {}) });
  });

  const json = bodies.reader(bodyLimitBytes, express.json({ limit: bodyLimitBytes, strict: true, type: () => true }));
  const jsonOnly: RequestHandler = (req, _res, next) => {
    if (!req.is('application/json')) return next(refusal('unsupported_media_type', 'send the body as Content-Type: application/json'));
    next();
  };
  const perMinute = options.rateLimitPerMinute ?? 1200;
  const window = rateWindow(perMinute);
  const limiter = perKeyRateLimit(perMinute, undefined, window);
  const rateLimit = (points?: (req: Request) => number) => perKeyRateLimit(perMinute, points, window);
  /** Run the rate limiter inside a handler: false when it answered 429 itself. */
  const withinLimit = (req: Request, res: Response) =>
    new Promise<boolean>((resolve, reject) => {
      res.once('finish', () => resolve(false));
      limiter(req, res, (error?: unknown) => (error ? reject(error) : resolve(true)));
    });
  const authorized = (scope: Scope, basic = false): RequestHandler => async (req, _res, next) => {
    try {
      await authorizer.authorize(req, String(req.params.store), scope, { basic });
      next();
    } catch (error) {
      next(error);
    }
  };

  app.post('/api/v1/stores/:store/tool-calls', authorized('write'), limiter, jsonOnly, json, async (req, res) => {
    const body = req.body as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refusal('bad_request', 'the body must be a JSON object {"tool_use": {...}, "session": "..."}');
    const extra = Object.keys(body).filter((k) => !TOOL_CALL_FIELDS.has(k));
    if (extra.length > 0) throw refusal('bad_request', `unknown field ${JSON.stringify(extra[0].slice(0, 64))}; the body is {"tool_use": {...}, "session": "..."}`);
    const { tool_use: toolUse, session } = body as { tool_use?: unknown; session?: unknown };
    if (toolUse === undefined) throw refusal('bad_request', 'tool_use is required: the Messages API tool_use block');
    if (typeof session !== 'string') throw refusal('bad_request', 'session is required: a string such as "sess_20261202T140312_k3f9"');
    // Checked before the store is touched: a request refused here must not create the store.
    const { input } = asMemoryToolUse(toolUse);
    const writes = !(typeof input === 'object' && input !== null && (input as { command?: unknown }).command === 'view');
    const key = req.memgitKey!;
    const id = String(req.params.store);
    // Answered once the call has settled: a remote client cannot wait for the working tree otherwise, and
    // whoever looks at the store's files after the answer (an operator, a test) finds them written. The
    // key's id goes into the commit (Memory-Key) from the key checked here, never from the body.
    const report = await registry.use(id, { create: key.create, key: key.id }, async (store) => {
      if (writes) await registry.assertRoom(id, store);
      const done = await store.executeWithReport(toolUse, { session, key: key.id, ...(key.review ? { review: key.review } : {}) }, { settle: true });
      // In a fleet, a write is acknowledged as the node's ack mode says: in replicated mode only once the
      // git server holds its commit (refused truthfully otherwise: not_replicated, store_fenced); a held
      // write's commit is on its review branch, which the same push carries.
      if (fleet && writes && done.commit) await fleet.acknowledge(id, store, done.commit, done.review ? 'review branch' : 'main');
      return done;
    });
    // A held write (docs/review.md) says so here; the model's tool_result is the contract's either way.
    res.json({ tool_result: report.result, commit: report.commit ?? null, ...(report.review ? { review: report.review } : {}), ...(fleet ? { ack: fleet.ack } : {}) });
  });

  app.get('/api/v1/stores', async (req, res) => {
    const key = await authorizer.authenticate(req);
    if (!(await withinLimit(req, res))) return;
    res.json({ stores: (await registry.list()).filter((id) => keyMatchesStore(key, id)) });
  });

  // Rollbacks: POST /api/v1/stores/{id}/rollback/{revert|restore|session|reset}, as the operator key, run
  // on the store by the operator floor as the UI's rollback API runs them (and answered as it answers:
  // a refused request is `{"error": message, "status": n}`, docs/service.md).
  const rollbackBody = bodies.reader(16 * 1024, express.json({ limit: '16kb', type: () => true }));
  app.post('/api/v1/stores/:store/rollback/:kind', authorized('operator'), limiter, jsonOnly, rollbackBody, async (req, res) => {
    const body = req.body as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refusal('bad_request', 'the body must be a JSON object');
    const key = req.memgitKey!;
    await registry.use(String(req.params.store), { create: false }, async (store) => {
      // Commits written since by another process (memgit exec) are in the index before a ref is resolved.
      await store.refreshHead();
      try {
        // The commit names the key that asked for it: `Memory-Actor: operator:key:<id>` and `Memory-Key`.
        const outcome = await rollbackRequest(store, String(req.params.kind), body, { operator: `key:${key.id}`, key: key.id });
        res.status(outcome.status === 'conflict' ? 409 : outcome.status === 'committed' ? 201 : 200).json(outcome);
      } catch (error) {
        const refused = httpErrorOf(error);
        // The server's own conditions (busy, shutting down) answer as every route does, below.
        if (!refused || refused.status >= 500 || !(error instanceof MemgitError)) throw error;
        res.status(refused.status).json({ error: error.detail, status: refused.status, code: error.code });
      }
    });
  });

  // Dreams (docs/dreams.md): started and canceled with the operator key, read with a read key.
  const dreamBody = bodies.reader(16 * 1024, express.json({ limit: '16kb', type: () => true }));
  const dreamJobs = (): DreamJobs => {
    if (!options.dreams) throw new HttpError(503, 'overloaded_error', 'dreams are not configured on this server');
    return options.dreams;
  };
  app.post('/api/v1/stores/:store/dreams', authorized('operator'), limiter, jsonOnly, dreamBody, async (req, res) => {
    res.status(201).json(await dreamJobs().start(registry, String(req.params.store), req.body as Record<string, unknown>));
  });
  app.get('/api/v1/stores/:store/dreams', authorized('read'), limiter, async (req, res) => {
    const data = await registry.use(String(req.params.store), { create: false }, async (store) => store.dreams());
    res.json({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
  });
  app.get('/api/v1/stores/:store/dreams/:id', authorized('read'), limiter, async (req, res) => {
    res.json(await registry.use(String(req.params.store), { create: false }, async (store) => store.dream(String(req.params.id))));
  });
  app.post('/api/v1/stores/:store/dreams/:id/cancel', authorized('operator'), limiter, async (req, res) => {
    res.json(await registry.use(String(req.params.store), { create: false }, async (store) => store.cancelDream(String(req.params.id))));
  });

  // Reviews (docs/review.md), as the operator key: writes held for review listed, shown, approved (all or
  // `calls`) or rejected. Before the read API, whose /api/v1/stores/{id}/... catch-all would take the GETs.
  app.get('/api/v1/stores/:store/reviews', authorized('operator'), limiter, async (req, res) => {
    await registry.use(String(req.params.store), { create: false }, async (store) => {
      res.json({ reviews: await store.reviews() });
    });
  });
  app.get('/api/v1/stores/:store/reviews/:id', authorized('operator'), limiter, async (req, res) => {
    await registry.use(String(req.params.store), { create: false }, async (store) => {
      res.json({ review: await store.review(String(req.params.id)) });
    });
  });
  app.post('/api/v1/stores/:store/reviews/:id/:action', authorized('operator'), limiter, jsonOnly, rollbackBody, async (req, res) => {
    const action = String(req.params.action);
    if (action !== 'approve' && action !== 'reject') throw new HttpError(404, 'not_found_error', 'the actions are approve and reject');
    const body = req.body as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'invalid_request_error', 'the body must be a JSON object');
    const extra = Object.keys(body).filter((k) => k !== 'reason' && !(action === 'approve' && k === 'calls'));
    if (extra.length > 0) throw new HttpError(400, 'invalid_request_error', `unknown field ${JSON.stringify(extra[0].slice(0, 64))}; the body is {"reason": "..."${action === 'approve' ? ', "calls": ["toolu_..."]' : ''}}`);
    if (body.reason !== undefined && typeof body.reason !== 'string') throw new HttpError(400, 'invalid_request_error', 'reason must be a string');
    const calls = body.calls;
    if (calls !== undefined && !(Array.isArray(calls) && calls.length <= 10_000 && calls.every((c) => typeof c === 'string'))) {
      throw new HttpError(400, 'invalid_request_error', 'calls must be an array of tool_use ids');
    }
    const key = req.memgitKey!;
    await registry.use(String(req.params.store), { create: false }, async (store) => {
      // The decision names the key that made it (`Memory-Approved-By` / `Memory-Actor: key:<id>`).
      const options = { operator: `key:${key.id}`, reason: body.reason as string | undefined };
      try {
        if (action === 'approve') res.json(await store.approveReview(String(req.params.id), { ...options, calls: calls as string[] | undefined }));
        else res.json({ review: await store.rejectReview(String(req.params.id), options) });
      } catch (error) {
        if (!(error instanceof ReviewRefusedError)) throw error;
        res.status(409).json({ error: { type: 'conflict_error', message: error.detail, code: error.code, conflicts: error.conflicts } });
      }
    });
  });

  // Mounted routes (MCP) come before the UI, whose /stores/{id}/... catch-all would take their paths.
  const jsonBody: RequestHandler = (req, res, next) => jsonOnly(req, res, (error?: unknown) => (error ? next(error) : json(req, res, next)));
  options.mount?.(app, { authorizer, registry, rateLimit, jsonBody, fleet });

  if (options.ui) {
    const ui = options.ui;
    const handlers = new WeakMap<MemoryStore, RequestHandler>();
    const handlerOf = (store: MemoryStore, id: string) => {
      let handler = handlers.get(store);
      if (!handler) handlers.set(store, (handler = ui.forStore(store, id)));
      return handler;
    };
    /** Serve `path` of store `id`'s UI app while the store is held open by the registry. */
    const dispatch = (req: Request, res: Response, id: string, innerPath: string, prefix: string | null) =>
      registry.use(id, { create: false }, (store) => runInner(handlerOf(store, id), req, res, innerPath, prefix));

    // Read API: GET /api/v1/stores/{id}[/commits|/sessions|/files/...] is the store UI's JSON twin.
    // The router decoded the id once; the rest of the path goes on as it came (the UI decodes it itself).
    app.get(/^\/api\/v1\/stores\/([^/]+)(\/.*)?$/, async (req, res) => {
      const id = String(req.params[0]);
      await authorizer.authorize(req, id, 'read');
      if (!(await withinLimit(req, res))) return;
      const rest = rawRest(req, /^\/api\/v1\/stores\/[^/]+(\/.*)?$/);
      consumeCredentials(req);
      await dispatch(req, res, id, `/api${rest === '/' ? '' : rest}`, null);
    });

    // The audit UI: the store list at /, each store's pages under /stores/{id}/ (Basic auth with a key).
    // A store that cannot be described (its queue is full, it is not a store after all) is listed as
    // unavailable: one tenant's busy or broken store never takes the page, let alone the process, down.
    const listFor = (key: KeyInfo) => async (): Promise<StoreListing> => {
      const ids = (await registry.list()).filter((id) => keyMatchesStore(key, id));
      const rows: StoreListing = [];
      for (const id of ids) rows.push(await registry.describe(id).catch((error: unknown) => unavailable(id, error, logger)));
      return rows;
    };
    app.all(/^\/stores\/([^/]+)(\/.*)?$/, async (req, res) => {
      const id = String(req.params[0]);
      await authorizer.authorize(req, id, 'read', { basic: true });
      if (!(await withinLimit(req, res))) return;
      const rest = rawRest(req, /^\/stores\/[^/]+(\/.*)?$/);
      if (rest === '') return res.redirect(308, `/stores/${encodeURIComponent(id)}/`);
      consumeCredentials(req);
      await dispatch(req, res, id, rest, `/stores/${encodeURIComponent(id)}`);
    });
    app.use(async (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      if (req.path !== '/' && !req.path.startsWith('/static/')) return next();
      const key = await authorizer.authenticate(req, { basic: true });
      if (!(await withinLimit(req, res))) return;
      consumeCredentials(req);
      await ui.root(listFor(key))(req, res, next);
    });
  }

  app.use((req, _res, next) => next(refusal('not_found', `nothing at ${req.method} ${req.path.slice(0, 200)}`)));
  app.use(errorHandler(logger));
  return app;
}

/**
 * The part of the path after the store segment, still percent-encoded as it arrived: the store's UI
 * decodes it once itself (the router's decoded copy would be decoded a second time there).
 */
function rawRest(req: Request, pattern: RegExp): string {
  return pattern.exec(req.path)?.[1] ?? '';
}

/**
 * The key in the Authorization header has been checked (req.memgitKey): the store UI must not take it
 * for a guess at the operator token, nor see it at all.
 */
function consumeCredentials(req: Request): void {
  delete req.headers.authorization;
}

/** The row of a store the list could not describe; unexpected failures are logged, never thrown. */
function unavailable(id: string, error: unknown, logger: Logger): UnavailableStore {
  if (error instanceof QueueFullError) return { id, unavailable: 'busy: too many calls in flight; reload in a moment' };
  if (error instanceof StoreNotFoundError || error instanceof NotAStoreError || error instanceof InvalidStoreIdError) return { id, unavailable: 'not a store' };
  if (error instanceof RegistryClosedError || error instanceof StoreClosedError) return { id, unavailable: 'the server is shutting down' };
  logger.error({ err: error, store: id }, 'could not describe a store for the store list');
  return { id, unavailable: 'could not be read (the server log has the details)' };
}

/**
 * `X-Content-Type-Options: nosniff` on every answer, and `Cache-Control: no-store` on every answer to a
 * request that carried credentials (tool calls and pages carry memory; browsers keep Basic-auth pages).
 * Applied as the head is written, so that no inner handler (static files, the MCP transport) can undo it.
 */
function answerHeaders(req: Request, res: Response, next: NextFunction): void {
  const credentials = req.headers.authorization !== undefined;
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    this.setHeader('X-Content-Type-Options', 'nosniff');
    const authenticated = credentials || req.memgitKey !== undefined;
    if (authenticated) this.setHeader('Cache-Control', 'no-store');
    // Headers handed to writeHead itself win over setHeader's: correct them there too.
    const given = args.find((a, i) => i > 0 && typeof a === 'object' && a !== null && !Array.isArray(a)) as Record<string, unknown> | undefined;
    if (given) {
      for (const name of Object.keys(given)) {
        const lower = name.toLowerCase();
        if (lower === 'x-content-type-options' || (authenticated && lower === 'cache-control')) delete given[name];
      }
    }
    return (writeHead as (...a: unknown[]) => Response).apply(this, args);
  } as Response['writeHead'];
  next();
}

/**
 * Run an inner app on a rewritten path and wait until the response is done (the store stays held open
 * meanwhile). With `prefix`, HTML links and redirects of the inner app are moved under the prefix.
 */
function runInner(handler: RequestHandler, req: Request, res: Response, innerPath: string, prefix: string | null): Promise<void> {
  const query = innerPath.includes('?') ? '' : req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
  req.url = `${innerPath}${query}`;
  req.originalUrl = req.url;
  if (prefix) prefixOutput(res, prefix);
  return new Promise<void>((resolve, reject) => {
    res.once('finish', () => resolve());
    res.once('close', () => resolve());
    handler(req, res, (error?: unknown) => (error ? reject(error) : reject(refusal('not_found', 'nothing here'))));
  });
}

/**
 * The UI writes root-relative links (`href="/commits"`); under /stores/{id} they must gain the prefix,
 * except the links marked `data-server-link` (written just before their href: the list of stores).
 * Stored data cannot forge an attribute here: the templates autoescape every quote in stored text.
 */
function prefixOutput(res: Response, prefix: string): void {
  const send = res.send.bind(res);
  res.send = ((body?: unknown) => {
    const type = String(res.getHeader('Content-Type') ?? '');
    if (typeof body === 'string' && type.startsWith('text/html')) {
      body = body.replace(/(?<!\sdata-server-link)(\s(?:href|src|action)=")\/(?!\/)/g, `$1${prefix}/`);
    }
    return send(body);
  }) as Response['send'];
  const setHeader = res.setHeader.bind(res);
  res.setHeader = ((name: string, value: number | string | readonly string[]) => {
    if (name.toLowerCase() === 'location' && typeof value === 'string' && value.startsWith('/') && !value.startsWith('//')) value = `${prefix}${value}`;
    return setHeader(name, value);
  }) as Response['setHeader'];
}

/**
 * Requests per key per minute, with the limiter the UI's login already uses (rate-limiter-flexible): a fixed
 * window per key, 429 with Retry-After (the seconds until the window ends) and the IETF RateLimit headers.
 * A request counts `points(req)` (default 1; a JSON-RPC batch counts each of its messages; 0 counts nothing)
 * in `window`, which every limiter of the server shares.
 */
function perKeyRateLimit(perMinute: number, points: (req: Request) => number = () => 1, window = rateWindow(perMinute)): RequestHandler {
  if (perMinute === 0) return (_req, _res, next) => next();
  const policy = `"per-key";q=${perMinute};w=60`;
  return (req, res, next) => {
    const count = points(req);
    if (count <= 0) return next();
    const key = `key:${req.memgitKey?.id ?? 'none'}`;
    const answer = (state: RateLimiterRes) => {
      const reset = Math.ceil(state.msBeforeNext / 1000);
      res.setHeader('RateLimit-Policy', policy);
      res.setHeader('RateLimit', `"per-key";r=${Math.max(0, state.remainingPoints)};t=${reset}`);
      return reset;
    };
    window
      .consume(key, count)
      .then(
        (state) => {
          answer(state);
          next();
        },
        (refused: unknown) => {
          if (!(refused instanceof RateLimiterRes)) return next(refused);
          res.setHeader('Retry-After', String(Math.max(1, answer(refused))));
          const batch = count > 1 ? `; this request counts ${count}, one per message of its batch` : '';
          sendError(res, refusal('rate_limited', `more than ${perMinute} requests a minute with this key${batch}`));
        },
      )
      .catch(next);
  };
}

function rateWindow(perMinute: number): RateLimiterMemory {
  return new RateLimiterMemory({ points: Math.max(1, perMinute), duration: 60 });
}

function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const id = randomUUID();
    res.setHeader('X-Request-Id', id);
    res.once('finish', () => {
      logger.info({
        req_id: id,
        method: req.method,
        // The path as it arrived, before any inner rewrite; the query may carry search text: not logged.
        path: (req as Request & { memgitPath?: string }).memgitPath,
        store: req.memgitStore ?? null,
        key_id: req.memgitKey?.id ?? null,
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
      });
    });
    (req as Request & { memgitPath?: string }).memgitPath = req.path.slice(0, 300);
    next();
  };
}

function errorHandler(logger: Logger) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const known = toHttpError(error);
    if (!known) {
      logger.error({ err: error, path: req.path.slice(0, 300), store: req.memgitStore ?? null }, 'internal error');
      return sendError(res, refusal('internal_error', 'internal error; nothing about it is sent to clients, see the server log'));
    }
    if (known.status === 404 && req.memgitStore && known.type === 'not_found_error' && error instanceof StoreNotFoundError) {
      return sendError(res, notFoundStore(req.memgitStore));
    }
    sendError(res, known);
  };
}

function toHttpError(error: unknown): HttpError | null {
  if (error instanceof HttpError) return error;
  const coded = httpErrorOf(error);
  if (coded) return coded;
  if (error instanceof URIError) return refusal('bad_request', 'malformed percent-encoding in the URL');
  const body = error as { type?: string; status?: number; expose?: boolean; message?: string };
  if (body?.type === 'entity.too.large') return refusal('body_too_large', 'the request body is too large');
  if (body?.type === 'entity.parse.failed') return refusal('invalid_json', 'the body is not valid JSON');
  if (typeof body?.status === 'number' && body.status >= 400 && body.status < 500 && body.expose) return new HttpError(body.status, 'invalid_request_error', String(body.message), {}, 'bad_request');
  return null;
}

/**
 * Replication lag of the open stores, as totals: /healthz needs no key, so it names no store and no
 * remote. `stopped` counts replicas that refused to overwrite a remote that moved (see memgit status).
 */
async function replicationHealth(stores: MemoryStore[]) {
  let replicas = 0;
  let lagging = 0;
  let stopped = 0;
  let maxLagCommits = 0;
  let oldestUnpushedAgeSeconds = 0;
  for (const store of stores) {
    for (const remote of await listRemotes({ fs, gitdir: store.gitdir }).catch(() => [])) {
      const status = replicationStatus(store.replication(), remote);
      replicas++;
      if (status.stopped) stopped++;
      if (status.lagCommits > 0) lagging++;
      maxLagCommits = Math.max(maxLagCommits, status.lagCommits);
      oldestUnpushedAgeSeconds = Math.max(oldestUnpushedAgeSeconds, status.oldestUnpushedAgeSeconds ?? 0);
    }
  }
  return { replicas, lagging, stopped, maxLagCommits, oldestUnpushedAgeSeconds };
}
