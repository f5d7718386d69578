import type { NextFunction, Request, Response, Router } from 'express';
import type { Environment } from 'nunjucks';
import { webAnswer, webRefusalCode } from './errors';
import { resolveLabels } from './labels';
import { AuditContext, BadRequest, NotFound } from './services/context';

/**
 * A page is one loader and one template. Registering it mounts both the HTML page and its JSON twin
 * under /api, so the two can never drift apart.
 */
export interface Page<M extends object = object> {
  /** Express 5 path, e.g. '/commits/:id' or '/files/*path'. */
  path: string;
  /** The template, or a choice of template by model (one path serving two kinds of page). */
  view: string | ((model: M) => string);
  load: (req: Request, ctx: AuditContext) => Promise<M>;
  /** The document title, from the model. */
  title: (model: M) => string;
  /** A request this page leaves to the routes after it (e.g. `/dreams/new`, the operator's form, under `/dreams/:id`). */
  skip?: (req: Request) => boolean;
}

/** What every page of one app says about where it is served (the layout's title and header, the login page). */
export interface SiteInfo {
  /** The command that printed the operator token: `memgit serve`, or `memgit server` for a server's store. */
  command: string;
  /** Under `memgit server`: this store's id and the URL of the list of stores. */
  store: { id: string; listUrl: string } | null;
}

export interface WebDeps {
  ctx: AuditContext;
  views: Environment;
  site?: SiteInfo;
}

/** A module of routes: pages register through registerPage; other routes (raw, later rollback) directly. */
export type RouteModule = (router: Router, deps: WebDeps) => void;

export function registerPage<M extends object>(router: Router, deps: WebDeps, page: Page<M>): void {
  router.get(page.path, async (req, res, next) => {
    if (page.skip?.(req)) return next();
    const model = await page.load(req, deps.ctx);
    const view = typeof page.view === 'string' ? page.view : page.view(model);
    renderHtml(res, deps, view, { ...model, title: page.title(model) }, req);
  });
  router.get(`/api${page.path === '/' ? '' : page.path}`, async (req, res, next) => {
    if (page.skip?.(req)) return next();
    res.json(await page.load(req, deps.ctx));
  });
}

export function renderHtml(res: Response, deps: WebDeps, view: string, model: object, req: Request): void {
  // `search`: the query as sent ('' or '?…'), so "this page as JSON" is the twin of this very page.
  const at = req.url.indexOf('?');
  const search = at === -1 ? '' : req.url.slice(at);
  const site = deps.site ?? { command: 'memgit serve', store: null };
  const html = deps.views.render(view, { ...model, site, request: { path: req.path, query: req.query, search }, now: Date.now() / 1000 });
  res.type('html').send(resolveLabels(html));
}

/** Error pages: a clear message for a missing thing or a bad parameter; no detail of internal errors. */
export function errorHandler(deps: WebDeps, log: (message: string) => void) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    // The router marks a URL it cannot decode (`/files/%`) with status 400: the client's mistake, not ours.
    const malformedUrl = error instanceof URIError || (error as { status?: unknown })?.status === 400;
    // A store's error answers by its code (errors.ts, the one table); the pages' own NotFound and BadRequest.
    const coded = webAnswer(error);
    const status = coded ? coded.status : error instanceof NotFound ? 404 : error instanceof BadRequest || malformedUrl ? 400 : 500;
    const message =
      status === 500
        ? 'Something went wrong while reading the store.'
        : coded
          ? coded.message
          : malformedUrl && !(error instanceof BadRequest)
            ? 'malformed percent-encoding in the URL'
            : (error as Error).message;
    if (status === 500) log(`${req.method} ${req.path}: ${(error as Error)?.stack ?? String(error)}`);
    res.status(status);
    if (req.path.startsWith('/api/') || req.path === '/api') {
      res.json({ error: message, status, code: coded ? coded.code : webRefusalCode(status) });
    } else {
      renderHtml(res, deps, 'pages/error.njk', { title: status === 404 ? 'Not found' : status === 400 ? 'Bad request' : status === 409 ? 'Refused' : 'Error', status, message }, req);
    }
  };
}

/** A single string query parameter (undefined when absent); repeated parameters are a 400. */
export function queryString(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new BadRequest(`${name} must be given once`);
  return value;
}

/** The path captured by a '*path' wildcard, as a memory path relative to /memories. */
export function wildcardPath(req: Request): string {
  const raw = (req.params as Record<string, string | string[] | undefined>).path;
  const segments = Array.isArray(raw) ? raw : raw ? [raw] : [];
  if (segments.some((s) => s === '' || s === '.' || s === '..')) throw new BadRequest('malformed memory path');
  return segments.join('/');
}
