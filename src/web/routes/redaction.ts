import type { Request, Response, Router } from 'express';
import { InvalidRequestError } from '../../operator/errors';
import { MAX_REASON_LENGTH, parseRedactionRequest, REDACTION_KINDS, RedactionRequest, runRedaction } from '../../operator/redaction';
import { type RedactionOutcome, StaleHeadError } from '../../store';
import { CSRF_FIELD, sameOriginOnly } from '../auth';
import { renderHtml, WebDeps } from '../page';
import { noStore } from '../security';
import { formFields, PendingRedactions, previewModel, RedactionFormFields } from '../services/redaction';
import type { OperatorKit } from './operator-kit';

/**
 * The redaction action, behind the operator login of the operator routes (which mount it): a form
 * (GET /redact, may be prefilled with a call or a path, never with a text), a preview (POST
 * /redact/preview: a dry run listing every commit and line it will change, the match masked) and the
 * confirmation (POST /redact, carrying only the id of the previewed redaction kept on the server), which
 * rewrites history and lands on the new record. What to match travels only in POST bodies.
 */

export function redactionActions(router: Router, deps: WebDeps, kit: OperatorKit): void {
  const { auth, refuse, bodies, checkedOperator } = kit;
  // One per app (per store): a previewed redaction is confirmed on the store it was previewed on.
  const pending = new PendingRedactions();
  deps.views.addGlobal('redactionEnabled', !deps.ctx.store.readOnly);
  router.use('/redact', noStore, auth.cookies, sameOriginOnly(refuse));

  const formPage = (req: Request, res: Response, operator: string, fields: RedactionFormFields, error?: string) => {
    renderHtml(
      res,
      deps,
      'pages/redact-form.njk',
      { title: 'Redact from history', noJsonTwin: true, operator, fields, kinds: REDACTION_KINDS, error, maxReason: MAX_REASON_LENGTH, csrfField: CSRF_FIELD, csrfToken: auth.csrfToken(req, res) },
      req,
    );
  };

  const previewPage = (req: Request, res: Response, operator: string, request: RedactionRequest, outcome: RedactionOutcome, stale = false) => {
    const model = previewModel(deps.ctx, request, outcome);
    const sessionKey = auth.sessionKey(req);
    const pendingId = outcome.blobsRedacted > 0 && sessionKey ? pending.put(sessionKey, request, outcome.oldHead) : null;
    renderHtml(
      res,
      deps,
      'pages/redact-preview.njk',
      { ...model, title: `Preview: redaction ${model.id}`, noJsonTwin: true, operator, pendingId, stale, csrfField: CSRF_FIELD, csrfToken: auth.csrfToken(req, res) },
      req,
    );
  };

  router.get('/redact', (req, res) => {
    const operator = auth.sessionOperator(req);
    if (!operator) return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    formPage(req, res, operator, formFields(req.query as Record<string, unknown>));
  });

  router.post('/redact/preview', ...bodies, async (req, res) => {
    const operator = checkedOperator(req, res);
    if (!operator) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const request = parseRedactionRequest(body);
      previewPage(req, res, operator, request, await runRedaction(deps.ctx.store, request, operator, { dryRun: true }));
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      res.status(400);
      formPage(req, res, operator, formFields(body), error.message);
    }
  });

  router.post('/redact', ...bodies, async (req, res) => {
    const operator = checkedOperator(req, res);
    if (!operator) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const taken = pending.take(body.pending, auth.sessionKey(req) ?? '');
    if (!taken) {
      res.status(400);
      return formPage(req, res, operator, formFields({}), 'That preview has expired or was already used (or belongs to another login). Preview the redaction again.');
    }
    const { request } = taken;
    const again = formFields({ kind: request.kind, path: request.kind === 'path' ? request.value : '', call: request.kind === 'call' ? request.value : '', reason: request.reason, from: request.from, to: request.to });
    try {
      const outcome = await runRedaction(deps.ctx.store, request, operator, { dryRun: false, expectHead: taken.head });
      if (outcome.record) return res.redirect(303, `/redactions/${outcome.id}`);
      previewPage(req, res, operator, request, outcome); // nothing matches any more: nothing was written
    } catch (error) {
      if (error instanceof StaleHeadError) {
        // The memory changed since the preview (an agent call landed): preview again, against it.
        res.status(409);
        return previewPage(req, res, operator, request, await runRedaction(deps.ctx.store, request, operator, { dryRun: true }), true);
      }
      if (!(error instanceof InvalidRequestError)) throw error;
      res.status(400);
      formPage(req, res, operator, again, error.message);
    }
  });
}
