import express, { Request, Response, Router } from 'express';
import { isValidId } from '../../contract/paths';
import { oneLine, ReadOnlyStoreError } from '../../store';
import { bearerToken, CSRF_FIELD, OperatorAuth, OperatorAuthOptions, sameOriginOnly, tooManyFailures } from '../auth';
import { renderHtml, RouteModule, WebDeps } from '../page';
import { noStore } from '../security';
import { redactionActions } from './redaction';
import { BadRequest } from '../services/context';
import { actionParams, boundedOutcome, confirmModel, describe, parseAction, RollbackAction, runAction, StaleHeadError } from '../services/rollback';

/**
 * The state-changing routes: operator login, and the four rollback actions as a confirmation page
 * (GET: a preview, changes nothing) and a POST that commits. JSON twins under /api/rollback take the
 * same login cookie plus an X-CSRF-Token header, or `Authorization: Bearer <operator token>`.
 */

export interface RollbackRouteOptions {
  /** The operator token (printed by `memgit serve`, or MEMGIT_TOKEN). */
  token: string;
  /** Mark cookies Secure (the public URL is HTTPS); createApp also sets this from its publicUrl. */
  secureCookies?: boolean;
  /** Who failed logins count against (OperatorAuthOptions.failureKey; default: the client's address). */
  failureKey?: OperatorAuthOptions['failureKey'];
  /** The id of the server key a request came with (memgit server), recorded on its rollbacks as `Memory-Key`. */
  keyOf?: (req: Request) => string | undefined;
}

/** The rollback routes, carrying the login they check (createApp uses it for the read gate). */
export type RollbackRouteModule = RouteModule & { operatorAuth: OperatorAuth };

const BODY_LIMIT = '16kb';
const MAX_REASON_LENGTH = 200;

export function rollbackRoutes(options: RollbackRouteOptions): RollbackRouteModule {
  const auth = new OperatorAuth(options.token, Date.now, { secureCookies: options.secureCookies, failureKey: options.failureKey });
  const keyOf = (req: Request): { key?: string } => {
    const key = options.keyOf?.(req);
    return key === undefined ? {} : { key };
  };
  const module: RouteModule = (router: Router, deps: WebDeps) => {
    // A store memgit may not write (a read-only clone) is offered no action; the pages say why, and
    // every action route answers 409 with the store's own read-only message.
    const readOnly = deps.ctx.store.readOnly;
    deps.views.addGlobal('rollbackEnabled', !readOnly);
    if (readOnly) deps.views.addGlobal('writesRefused', new ReadOnlyStoreError().message.replace(/^memgit: /, ''));
    const refuse = (req: Request, res: Response, status: number, message: string) => {
      res.status(status);
      if (isApi(req)) res.json({ error: message, status });
      else renderHtml(res, deps, 'pages/error.njk', { title: status === 401 ? 'Log in first' : 'Refused', status, message }, req);
    };
    const bodies = [express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 20 }), express.json({ limit: BODY_LIMIT })];
    const guarded = ['/login', '/logout', '/rollback', '/api/rollback'];
    // These pages carry the CSRF token or memory: no cache (browser or proxy) keeps them.
    for (const prefix of guarded) router.use(prefix, noStore, auth.cookies, sameOriginOnly(refuse));
    if (readOnly) {
      router.use(['/rollback', '/api/rollback', '/redact'], noStore, sameOriginOnly(refuse), (req: Request, res: Response) =>
        refuse(req, res, 409, new ReadOnlyStoreError().message.replace(/^memgit: /, '')),
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

    router.get('/rollback/:kind', async (req, res) => {
      const operator = auth.sessionOperator(req);
      if (!operator) return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
      const action = parseAction(String(req.params.kind), req.query as Record<string, unknown>);
      const model = await confirmModel(deps.ctx, action, operator);
      renderHtml(res, deps, 'pages/rollback-confirm.njk', confirmPage(req, res, auth, operator, model), req);
    });

    router.post('/rollback/:kind', ...bodies, async (req, res) => {
      const operator = auth.sessionOperator(req);
      if (!operator) return refuse(req, res, 401, 'log in as the operator first');
      await csrfChecked(async () => {
        const body = req.body as Record<string, unknown>;
        const action = parseAction(String(req.params.kind), body);
        const reason = readReason(body.reason);
        const expectHead = typeof body.expectHead === 'string' && body.expectHead ? body.expectHead : undefined;
        try {
          const outcome = await runAction(deps.ctx, action, { operator, reason, expectHead, ...keyOf(req) });
          if (outcome.status === 'committed') return res.redirect(303, `/commits/${outcome.commit}`);
          res.status(outcome.status === 'conflict' ? 409 : 200);
          renderHtml(res, deps, 'pages/rollback-confirm.njk', confirmPage(req, res, auth, operator, await describe(deps.ctx, action, outcome), reason), req);
        } catch (error) {
          if (!(error instanceof StaleHeadError)) throw error;
          res.status(409);
          const model = await confirmModel(deps.ctx, action, operator);
          renderHtml(res, deps, 'pages/rollback-confirm.njk', { ...confirmPage(req, res, auth, operator, model, reason), stale: true }, req);
        }
      })(req, res);
    });

    // JSON twins. GET previews like the pages (read-only, but only for the operator, as the pages); POST
    // acts, dryRun:true previews.
    router.get('/api/rollback/:kind', async (req, res) => {
      if (!auth.sessionOperator(req)) {
        const bearer = bearerToken(req);
        if (bearer === null) return refuse(req, res, 401, 'log in as the operator, or send Authorization: Bearer <operator token>');
        const check = await auth.checkTokenFrom(req, bearer);
        if (!check.ok && check.retryAfterS !== null) return tooManyFailures(res, check.retryAfterS, true);
        if (!check.ok) return refuse(req, res, 401, 'wrong operator token');
      }
      const action = parseAction(String(req.params.kind), req.query as Record<string, unknown>);
      res.json(boundedOutcome(await runAction(deps.ctx, action, { operator: 'preview', dryRun: true })));
    });

    router.post('/api/rollback/:kind', express.json({ limit: BODY_LIMIT }), async (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      let operator: string | null;
      const bearer = bearerToken(req);
      if (bearer !== null) {
        const check = await auth.checkTokenFrom(req, bearer);
        if (!check.ok && check.retryAfterS !== null) return tooManyFailures(res, check.retryAfterS, true);
        if (!check.ok) return refuse(req, res, 401, 'wrong operator token');
        operator = typeof body.operator === 'string' ? body.operator : 'api';
        if (!isValidId(operator)) return refuse(req, res, 400, 'operator: 1-128 of A-Z a-z 0-9 _ . : -');
      } else {
        operator = auth.sessionOperator(req);
        if (!operator) return refuse(req, res, 401, 'log in as the operator, or send Authorization: Bearer <operator token>');
        if (!auth.validCsrf(req)) return refuse(req, res, 403, 'missing or invalid X-CSRF-Token header');
      }
      const action = parseAction(String(req.params.kind), body);
      const outcome = await runAction(deps.ctx, action, {
        operator,
        reason: readReason(body.reason),
        dryRun: body.dryRun === true,
        expectHead: typeof body.expectHead === 'string' ? body.expectHead : undefined,
        ...keyOf(req),
      }).catch((error: unknown) => {
        if (error instanceof StaleHeadError) return null;
        throw error;
      });
      if (!outcome) return refuse(req, res, 409, 'the store changed since expectHead; preview again');
      res.status(outcome.status === 'conflict' ? 409 : outcome.status === 'committed' ? 201 : 200).json(boundedOutcome(outcome));
    });

    // Redaction rewrites history: the same operator login, CSRF and origin checks (routes/redaction.ts).
    redactionActions(router, deps, { auth, refuse, bodies });
  };
  return Object.assign(module, { operatorAuth: auth });
}

function isApi(req: Request): boolean {
  return req.originalUrl.startsWith('/api/');
}

function readReason(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new BadRequest('reason must be text');
  const line = oneLine(value, MAX_REASON_LENGTH);
  return line === '' ? undefined : line;
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

function confirmPage(req: Request, res: Response, auth: OperatorAuth, operator: string, model: Awaited<ReturnType<typeof confirmModel>>, reason?: string) {
  return {
    ...model,
    title: `Confirm: ${model.outcome.title}`,
    operator,
    reason: reason ?? '',
    csrfField: CSRF_FIELD,
    csrfToken: auth.csrfToken(req, res),
    formAction: `/rollback/${model.action.kind}`,
    hidden: actionParams(model.action as RollbackAction),
  };
}
