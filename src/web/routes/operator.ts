import express, { Request, Response, Router } from 'express';
import { isValidId } from '../../contract/paths';
import { ReadOnlyStoreError } from '../../store';
import { webRefusalCode } from '../errors';
import { CSRF_FIELD, OperatorAuth, OperatorAuthOptions, sameOriginOnly } from '../auth';
import { renderHtml, RouteModule, WebDeps } from '../page';
import { noStore } from '../security';
import { dreamActions, environmentDreams, type UiDreams } from './dream-actions';
import type { OperatorKit } from './operator-kit';
import { redactionActions } from './redaction';
import { reviewActions } from './review-actions';
import { rollbackActions } from './rollback';

/**
 * The operator's routes: everything that changes a store, behind one login. Operator login and logout;
 * the four rollback actions (routes/rollback.ts) as confirmation pages and their JSON twins under
 * /api/rollback; redaction (routes/redaction.ts). The JSON twins take the login cookie plus an
 * X-CSRF-Token header, or `Authorization: Bearer <operator token>`.
 */

export interface OperatorRouteOptions {
  /** The operator token (printed by `memgit serve`, or MEMGIT_TOKEN). */
  token: string;
  /** Mark cookies Secure (the public URL is HTTPS); createApp also sets this from its publicUrl. */
  secureCookies?: boolean;
  /** Who failed logins count against (OperatorAuthOptions.failureKey; default: the client's address). */
  failureKey?: OperatorAuthOptions['failureKey'];
  /** The id of the server key a request came with (memgit server), recorded on its rollbacks as `Memory-Key`. */
  keyOf?: (req: Request) => string | undefined;
  /** How "Start a dream" starts one (default: in this process, the SDK's client from the environment). */
  dreams?: UiDreams;
}

/** The operator's routes, carrying the login they check (createApp uses it for the read gate). */
export type OperatorRouteModule = RouteModule & { operatorAuth: OperatorAuth };

const BODY_LIMIT = '16kb';

export function operatorRoutes(options: OperatorRouteOptions): OperatorRouteModule {
  const auth = new OperatorAuth(options.token, Date.now, { secureCookies: options.secureCookies, failureKey: options.failureKey });
  const keyOf = (req: Request): { key?: string } => {
    const key = options.keyOf?.(req);
    return key === undefined ? {} : { key };
  };
  const dreams = options.dreams ?? environmentDreams();
  const module: RouteModule = (router: Router, deps: WebDeps) => {
    // A store memgit may not write (a read-only clone) is offered no action; the pages say why, and
    // every action route answers 409 with the store's own read-only message.
    const readOnly = deps.ctx.store.readOnly;
    deps.views.addGlobal('rollbackEnabled', !readOnly);
    if (readOnly) deps.views.addGlobal('writesRefused', new ReadOnlyStoreError().detail);
    const refuse = (req: Request, res: Response, status: number, message: string) => {
      res.status(status);
      if (isApi(req)) res.json({ error: message, status, code: webRefusalCode(status) });
      else renderHtml(res, deps, 'pages/error.njk', { title: status === 401 ? 'Log in first' : 'Refused', status, message }, req);
    };
    const bodies = [express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 20 }), express.json({ limit: BODY_LIMIT })];
    const guarded = ['/login', '/logout', '/rollback', '/api/rollback'];
    // These pages carry the CSRF token or memory: no cache (browser or proxy) keeps them.
    for (const prefix of guarded) router.use(prefix, noStore, auth.cookies, sameOriginOnly(refuse));
    if (readOnly) {
      router.use(['/rollback', '/api/rollback', '/redact'], noStore, sameOriginOnly(refuse), (req: Request, res: Response) =>
        refuse(req, res, 409, new ReadOnlyStoreError().detail),
      );
    }

    const csrfChecked = (handler: (req: Request, res: Response) => Promise<void> | void) => async (req: Request, res: Response) => {
      if (!auth.validCsrf(req)) return refuse(req, res, 403, 'missing or invalid CSRF token; reload the page and try again');
      await handler(req, res);
    };

    router.get('/login', (req, res) => {
      renderHtml(res, deps, 'pages/rollback-login.njk', loginModel(req, res, auth), req);
    });

    router.post('/login', ...bodies, csrfChecked(async (req, res) => {
      const body = req.body as Record<string, unknown>;
      const name = typeof body.operator === 'string' ? body.operator.trim() : '';
      const check = await auth.checkTokenFrom(req, body.token);
      if (!check.ok && check.retryAfterS !== null) {
        res.status(429).set('Retry-After', String(check.retryAfterS));
        return renderHtml(res, deps, 'pages/rollback-login.njk', { ...loginModel(req, res, auth), error: `Too many failed logins from this client; try again in ${check.retryAfterS} seconds.` }, req);
      }
      if (!check.ok) {
        res.status(401);
        return renderHtml(res, deps, 'pages/rollback-login.njk', { ...loginModel(req, res, auth), error: 'That is not the operator token.' }, req);
      }
      if (!isValidId(name)) {
        res.status(400);
        return renderHtml(res, deps, 'pages/rollback-login.njk', { ...loginModel(req, res, auth), error: 'Your name: 1-128 of A-Z a-z 0-9 _ . : -' }, req);
      }
      auth.login(req, res, name);
      res.redirect(303, safeNext(body.next));
    }));

    router.post('/logout', ...bodies, csrfChecked((req, res) => {
      auth.logout(req, res);
      res.redirect(303, '/');
    }));

    const checkedOperator = (req: Request, res: Response): string | null => {
      const operator = auth.sessionOperator(req);
      if (!operator) {
        refuse(req, res, 401, 'log in as the operator first');
        return null;
      }
      if (!auth.validCsrf(req)) {
        refuse(req, res, 403, 'missing or invalid CSRF token; reload the page and try again');
        return null;
      }
      return operator;
    };
    const kit: OperatorKit = { auth, refuse, bodies, keyOf, checkedOperator };
    rollbackActions(router, deps, kit);
    // Redaction rewrites history: the same operator login, CSRF and origin checks.
    redactionActions(router, deps, kit);
    // Deciding held writes (docs/review.md): the same login, CSRF and origin checks.
    reviewActions(router, deps, kit);
    // Starting a dream (docs/dreams.md): the same login, CSRF and origin checks.
    dreamActions(router, deps, kit, dreams);
  };
  return Object.assign(module, { operatorAuth: auth });
}

/** The former name of operatorRoutes (it has held login and redaction besides rollback for a while). */
export const rollbackRoutes = operatorRoutes;
export type RollbackRouteOptions = OperatorRouteOptions;
export type RollbackRouteModule = OperatorRouteModule;

function isApi(req: Request): boolean {
  return req.originalUrl.startsWith('/api/');
}

/** Only a local path is a place to go after login (no `//host`, no backslashes, no scheme). */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || /[\\\s]/.test(value)) return '/';
  return value;
}

function loginModel(req: Request, res: Response, auth: OperatorAuth) {
  const next = safeNext(req.method === 'GET' ? req.query.next : (req.body as Record<string, unknown>)?.next);
  return { title: 'Operator login', next, csrfField: CSRF_FIELD, csrfToken: auth.csrfToken(req, res), operator: auth.sessionOperator(req) };
}
