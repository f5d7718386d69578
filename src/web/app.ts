import * as fs from 'node:fs';
import * as path from 'node:path';
import express, { Express } from 'express';
import * as nunjucks from 'nunjucks';
import type { CacheBudget, MemoryStore } from '../store';
import type { OperatorAuth } from './auth';
import { registerFilters } from './filters';
import { labelPlaceholder } from './labels';
import { errorHandler, RouteModule, SiteInfo, WebDeps } from './page';
import { ROUTE_MODULES } from './routes';
import { hostCheck, securityHeaders } from './security';
import { createAuditContext, NotFound } from './services/context';
import { MAX_PAGE_DIFF_CHARS } from './services/budget';
import { MAX_DIFF_LINES, MAX_LINE_CHARS } from './services/diff-view';
import { CALLS_PER_PAGE } from './services/sessions';
import { MAX_SHOWN_CHARS, MAX_SHOWN_LINES } from './services/files';

export interface AppOptions {
  store: MemoryStore;
  /** Host names besides the loopback names this server answers to (the Host header check). */
  allowedHosts?: string[];
  /** Extra route modules, mounted after the built-in ones (e.g. state-changing rollback routes). */
  routes?: RouteModule[];
  /** Where internal errors are reported (default: stderr). */
  log?: (message: string) => void;
  /** Reading needs the operator login (a UI reachable beyond loopback; startServer decides from the host). */
  readsNeedLogin?: boolean;
  /** The URL users reach the UI at; https:// makes cookies Secure and turns HSTS on. */
  publicUrl?: string;
  /** The operator login; by default the one of the rollback routes among `routes`. */
  auth?: OperatorAuth;
  /**
   * Behind a reverse proxy: express's `trust proxy` setting (e.g. 'loopback'), so that the scheme the
   * browser used (X-Forwarded-Proto) is what the same-origin check of state-changing requests compares.
   */
  trustProxy?: boolean | string;
  /**
   * Under `memgit server`: the store these pages show, named in every title and header, and the URL of
   * the list of stores the header links back to (a URL outside this store's pages, never prefixed).
   */
  serverStore?: { id: string; listUrl: string };
  /** The command whose start-up printed the operator token, as the login page names it (default `memgit serve`). */
  command?: string;
  /**
   * A memory budget the UI's caches share with other stores' (memgit server; see store/cache-budget.ts);
   * without one, the store's own budget (memgit serve's), if it has one.
   */
  cacheBudget?: CacheBudget;
  /**
   * The template environment (createViews), to share one between the UIs of many stores (memgit server):
   * compiled templates are then held once, not once per open store. The route modules must be the same,
   * and so must the stores' read-only state (route modules set globals from it: rollbackEnabled, ...).
   * What differs per store (its id, the command) rides on each page's model, not on the environment.
   */
  views?: nunjucks.Environment;
}

/** The directory holding layout.njk, pages/, partials/ and static/ (from src/web or dist/src/web). */
export function findViewsDir(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'views');
    if (fs.existsSync(path.join(candidate, 'layout.njk'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`cannot find the views directory above ${from}`);
  }
}

export function createViews(viewsDir = findViewsDir()): nunjucks.Environment {
  const env = new nunjucks.Environment(new nunjucks.FileSystemLoader(viewsDir), {
    autoescape: true,
    throwOnUndefined: false,
    trimBlocks: true,
    lstripBlocks: true,
  });
  registerFilters(env);
  // Shortened ids: placeholders that renderHtml turns into labels distinct across the page.
  env.addFilter('idLabel', labelPlaceholder);
  env.addGlobal('maxShownLines', MAX_SHOWN_LINES);
  env.addGlobal('maxShownChars', MAX_SHOWN_CHARS);
  env.addGlobal('maxLineChars', MAX_LINE_CHARS);
  env.addGlobal('maxDiffLines', MAX_DIFF_LINES);
  env.addGlobal('maxPageDiffChars', MAX_PAGE_DIFF_CHARS);
  env.addGlobal('callsPerPage', CALLS_PER_PAGE);
  return env;
}

/** The audit UI as an express app over an open store. Read-only: every route is a GET. */
export function createApp(options: AppOptions): Express {
  const viewsDir = findViewsDir();
  const site: SiteInfo = { command: options.command ?? 'memgit serve', store: options.serverStore ?? null };
  const deps: WebDeps = { ctx: createAuditContext(options.store, options.cacheBudget ?? options.store.cacheBudget), views: options.views ?? createViews(viewsDir), site };
  const log = options.log ?? ((message: string) => process.stderr.write(`memgit serve: ${message}\n`));
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  // The JSON twins carry diffs once, as numbered lines; side-by-side pairing is presentation.
  app.set('json replacer', (key: string, value: unknown) => (key === 'splitRows' ? undefined : value));
  const https = options.publicUrl !== undefined && /^https:\/\//i.test(options.publicUrl);
  const auth = options.auth ?? options.routes?.map((r) => (r as { operatorAuth?: OperatorAuth }).operatorAuth).find(Boolean);
  if (https) auth?.configure({ secureCookies: true });
  app.use(hostCheck(options.allowedHosts ?? []));
  app.use(securityHeaders({ https }));
  if (options.readsNeedLogin) {
    if (!auth) throw new Error('reads need the operator login, but no operator token was given');
    app.use(auth.cookies, auth.readGate());
  }
  app.use('/static', express.static(path.join(viewsDir, 'static'), { maxAge: '1h', index: false }));
  // Pages read the index; bring it up to date with commits written since (also by other processes).
  app.use(async (_req, _res, next) => {
    await options.store.refreshHead();
    next();
  });
  const router = express.Router();
  for (const module of [...ROUTE_MODULES, ...(options.routes ?? [])]) module(router, deps);
  app.use(router);
  app.use((req, _res, next) => next(new NotFound(`nothing at ${req.path}`)));
  app.use(errorHandler(deps, log));
  return app;
}
