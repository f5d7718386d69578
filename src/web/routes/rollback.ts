import express, { Request, Response, Router } from 'express';
import { isValidId } from '../../contract/paths';
import { actionParams, boundedOutcome, parseRollbackAction, readReason, RollbackAction, rollbackRequest, runRollback } from '../../operator/rollback';
import { StaleHeadError } from '../../store';
import { bearerToken, CSRF_FIELD, OperatorAuth, tooManyFailures } from '../auth';
import { renderHtml, WebDeps } from '../page';
import { confirmModel, describe } from '../services/rollback';
import type { OperatorKit } from './operator-kit';

/**
 * The four rollback actions, behind the operator login of the operator routes (which mount them): a
 * confirmation page (GET: a preview, changes nothing) and a POST that commits; JSON twins under
 * /api/rollback. Requests are parsed and run by the operator floor (src/operator/rollback.ts), as the
 * server's rollback API does.
 */

const BODY_LIMIT = '16kb';

export function rollbackActions(router: Router, deps: WebDeps, kit: OperatorKit): void {
  const { auth, refuse, bodies, keyOf } = kit;

  router.get('/rollback/:kind', async (req, res) => {
    const operator = auth.sessionOperator(req);
    if (!operator) return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    const action = parseRollbackAction(String(req.params.kind), req.query as Record<string, unknown>);
    const model = await confirmModel(deps.ctx, action, operator);
    renderHtml(res, deps, 'pages/rollback-confirm.njk', confirmPage(req, res, auth, operator, model), req);
  });

  router.post('/rollback/:kind', ...bodies, async (req, res) => {
    const operator = auth.sessionOperator(req);
    if (!operator) return refuse(req, res, 401, 'log in as the operator first');
    if (!auth.validCsrf(req)) return refuse(req, res, 403, 'missing or invalid CSRF token; reload the page and try again');
    const body = req.body as Record<string, unknown>;
    const action = parseRollbackAction(String(req.params.kind), body);
    const reason = readReason(body.reason);
    const expectHead = typeof body.expectHead === 'string' && body.expectHead ? body.expectHead : undefined;
    try {
      const outcome = await runRollback(deps.ctx.store, action, { operator, reason, expectHead, ...keyOf(req) });
      if (outcome.status === 'committed') return res.redirect(303, `/commits/${outcome.commit}`);
      res.status(outcome.status === 'conflict' ? 409 : 200);
      renderHtml(res, deps, 'pages/rollback-confirm.njk', confirmPage(req, res, auth, operator, await describe(deps.ctx, action, outcome), reason), req);
    } catch (error) {
      if (!(error instanceof StaleHeadError)) throw error;
      res.status(409);
      const model = await confirmModel(deps.ctx, action, operator);
      renderHtml(res, deps, 'pages/rollback-confirm.njk', { ...confirmPage(req, res, auth, operator, model, reason), stale: true }, req);
    }
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
    const action = parseRollbackAction(String(req.params.kind), req.query as Record<string, unknown>);
    res.json(boundedOutcome(await runRollback(deps.ctx.store, action, { operator: 'preview', dryRun: true })));
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
    const outcome = await rollbackRequest(deps.ctx.store, String(req.params.kind), body, { operator, ...keyOf(req) });
    res.status(outcome.status === 'conflict' ? 409 : outcome.status === 'committed' ? 201 : 200).json(outcome);
  });
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
