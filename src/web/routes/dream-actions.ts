import type { Request, Response, Router } from 'express';
import {
  DreamRunningError,
  InvalidDreamError,
  MAX_DREAM_INSTRUCTIONS,
  ReadOnlyStoreError,
  type DreamRecord,
  type MemoryStore,
} from '../../store';
import { CSRF_FIELD, sameOriginOnly } from '../auth';
import { renderHtml, WebDeps } from '../page';
import { noStore } from '../security';
import type { OperatorKit } from './operator-kit';

/**
 * Starting a dream from the UI (issue 28, docs/dreams.md), behind the operator login with CSRF and origin
 * checks, as deciding a review is: a form (GET /dreams/new: the sessions to read, the operator's
 * instructions), then POST /dreams, which starts the dream in the background and lands on its page. The
 * SDK's client is made as `memgit dream` makes it, from the environment of the process serving the UI
 * (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); without a key the form says so and nothing is started.
 */

export interface UiDreamRequest {
  /** Sessions to read; empty: the sessions since the last completed dream. */
  sessions: string[];
  instructions: string | null;
  model: string;
}

/** How the UI starts dreams: `memgit serve` runs them in its own process, `memgit server` as its background jobs. */
export interface UiDreams {
  /** Why no dream can be started from the UI now (no API key), or null. */
  unavailable(): string | null;
  /**
   * Start a dream on `store` (`storeId`: its id under `memgit server`, else null); resolves once it is
   * begun (pending). Throws InvalidDreamError, DreamRunningError, or an error with an HTTP `status` (the
   * server's bound of running dreams).
   */
  start(store: MemoryStore, storeId: string | null, request: UiDreamRequest): Promise<DreamRecord>;
}

export const NO_API_KEY_MESSAGE =
  'No API key: the process serving this UI has no ANTHROPIC_API_KEY in its environment, so it cannot talk to Claude. ' +
  'Restart it with ANTHROPIC_API_KEY set (and ANTHROPIC_BASE_URL for another endpoint), as for `memgit dream`. Nothing was started.';

/** Whether the environment holds what the SDK's client needs (as `memgit dream` checks it). */
export function hasAnthropicKey(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN);
}

/** The model a dream started from the UI uses: `$MEMGIT_MODEL`, else the runner's default. */
function defaultModel(): string {
  const { DEFAULT_DREAM_MODEL } = require('../../dream') as typeof import('../../dream');
  return process.env.MEMGIT_MODEL || DEFAULT_DREAM_MODEL;
}

/** `memgit serve`'s: the dream runs in this process, the SDK's client made from the environment when it starts. */
export function environmentDreams(): UiDreams {
  return {
    unavailable: () => (hasAnthropicKey() ? null : NO_API_KEY_MESSAGE),
    start: async (store, _storeId, request) => {
      // Loaded on use, as the CLI does: a UI that starts no dream never loads the SDK.
      const { default: Anthropic } = require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk');
      const { startDream } = require('../../dream') as typeof import('../../dream');
      const { dream, done } = await startDream(store, new Anthropic(), { sessions: request.sessions, instructions: request.instructions, model: request.model });
      // Its end is written to its record (completed, failed or canceled); `done` never rejects.
      void done;
      return dream;
    },
  };
}

interface DreamFormFields {
  sessions: string;
  instructions: string;
}

function fieldsOf(body: Record<string, unknown>): DreamFormFields {
  return {
    sessions: typeof body.sessions === 'string' ? body.sessions.slice(0, 10_000) : '',
    instructions: typeof body.instructions === 'string' ? body.instructions.slice(0, MAX_DREAM_INSTRUCTIONS + 1000) : '',
  };
}

export function dreamActions(router: Router, deps: WebDeps, kit: OperatorKit, dreams: UiDreams): void {
  const { auth, refuse, bodies, checkedOperator } = kit;
  const guard = [noStore, auth.cookies, sameOriginOnly(refuse)];
  deps.views.addGlobal('dreamStartEnabled', !deps.ctx.store.readOnly);

  const formPage = (req: Request, res: Response, operator: string, fields: DreamFormFields, error?: string, live?: string) => {
    renderHtml(
      res,
      deps,
      'pages/dream-new.njk',
      {
        title: 'Start a dream',
        noJsonTwin: true,
        operator,
        fields,
        error,
        live,
        unavailable: dreams.unavailable(),
        maxInstructions: MAX_DREAM_INSTRUCTIONS,
        csrfField: CSRF_FIELD,
        csrfToken: auth.csrfToken(req, res),
      },
      req,
    );
  };

  router.get('/dreams/new', ...guard, (req, res) => {
    if (deps.ctx.store.readOnly) return refuse(req, res, 409, new ReadOnlyStoreError().detail);
    const operator = auth.sessionOperator(req);
    if (!operator) return res.redirect(303, `/login?next=${encodeURIComponent('/dreams/new')}`);
    formPage(req, res, operator, { sessions: '', instructions: '' });
  });

  router.post('/dreams', ...guard, ...bodies, async (req, res) => {
    if (deps.ctx.store.readOnly) return refuse(req, res, 409, new ReadOnlyStoreError().detail);
    const operator = checkedOperator(req, res);
    if (!operator) return;
    const fields = fieldsOf((req.body ?? {}) as Record<string, unknown>);
    const unavailable = dreams.unavailable();
    if (unavailable) {
      res.status(503);
      return formPage(req, res, operator, fields, unavailable);
    }
    const sessions = fields.sessions.split(/[\s,]+/).filter(Boolean);
    const instructions = fields.instructions.replace(/\r\n/g, '\n').trim();
    try {
      const dream = await dreams.start(deps.ctx.store, deps.site?.store?.id ?? null, { sessions, instructions: instructions || null, model: defaultModel() });
      res.redirect(303, `/dreams/${dream.id}`);
    } catch (error) {
      if (error instanceof InvalidDreamError) {
        res.status(400);
        return formPage(req, res, operator, fields, error.detail);
      }
      if (error instanceof DreamRunningError) {
        res.status(409);
        return formPage(req, res, operator, fields, error.detail, error.running);
      }
      const status = (error as { status?: unknown })?.status;
      if (typeof status === 'number' && status >= 400 && status < 600 && status !== 500) {
        // The server's refusals (its bound of running dreams, a shutdown): said as the API says them.
        res.status(status);
        return formPage(req, res, operator, fields, (error as Error).message);
      }
      throw error;
    }
  });
}
