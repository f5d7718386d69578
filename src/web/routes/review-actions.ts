import type { Request, Response, Router } from 'express';
import { REVIEW_ID_PATTERN, ReviewRefusedError } from '../../store';
import { CSRF_FIELD, sameOriginOnly } from '../auth';
import { renderHtml, WebDeps } from '../page';
import { noStore } from '../security';
import type { OperatorKit } from './operator-kit';
import { reviewModel } from './reviews';

/**
 * Deciding a review (docs/review.md), behind the operator login with CSRF and origin checks: a form
 * (GET /reviews/:id/decide: every call with its diff and findings, a box per call, a reason), then
 * POST /reviews/:id/approve (the ticked calls; all or nothing onto main) or POST /reviews/:id/reject.
 */
export function reviewActions(router: Router, deps: WebDeps, kit: OperatorKit): void {
  const { auth, refuse, bodies, checkedOperator } = kit;
  const guard = [noStore, auth.cookies, sameOriginOnly(refuse)];

  const idOf = (req: Request, res: Response): string | null => {
    const id = String(req.params.id);
    if (REVIEW_ID_PATTERN.test(id)) return id;
    refuse(req, res, 404, `no review ${JSON.stringify(id.slice(0, 40))} in this store`);
    return null;
  };

  const formPage = async (req: Request, res: Response, id: string, operator: string, error?: string) => {
    const model = reviewModel(await deps.ctx.store.review(id));
    renderHtml(res, deps, 'pages/review-decide.njk', { ...model, title: `Decide review ${id}`, noJsonTwin: true, operator, error, csrfField: CSRF_FIELD, csrfToken: auth.csrfToken(req, res) }, req);
  };

  router.get('/reviews/:id/decide', ...guard, async (req, res) => {
    const id = idOf(req, res);
    if (!id) return;
    const operator = auth.sessionOperator(req);
    if (!operator) return res.redirect(303, `/login?next=${encodeURIComponent(`/reviews/${id}/decide`)}`);
    await formPage(req, res, id, operator);
  });

  router.post('/reviews/:id/:action', ...guard, ...bodies, async (req, res) => {
    const action = String(req.params.action);
    if (action !== 'approve' && action !== 'reject') return refuse(req, res, 404, 'the actions are approve and reject');
    const id = idOf(req, res);
    if (!id) return;
    const operator = checkedOperator(req, res);
    if (!operator) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const reason = typeof body.reason === 'string' ? body.reason : undefined;
    const ticked = body.calls === undefined ? [] : Array.isArray(body.calls) ? body.calls : [body.calls];
    if (!ticked.every((c): c is string => typeof c === 'string')) return refuse(req, res, 400, 'calls must be tool_use ids');
    try {
      if (action === 'approve') {
        if (ticked.length === 0) {
          res.status(400);
          return await formPage(req, res, id, operator, 'Tick the calls to approve (or reject the review).');
        }
        await deps.ctx.store.approveReview(id, { operator, reason, calls: ticked });
      } else {
        await deps.ctx.store.rejectReview(id, { operator, reason });
      }
      res.redirect(303, `/reviews/${id}`);
    } catch (error) {
      if (!(error instanceof ReviewRefusedError)) throw error;
      res.status(409);
      if ((await deps.ctx.store.reviews()).some((r) => r.id === id && r.state === 'pending')) return await formPage(req, res, id, operator, error.detail);
      refuse(req, res, 409, error.detail);
    }
  });
}
