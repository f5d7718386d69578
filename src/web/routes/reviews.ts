import { createTwoFilesPatch } from 'diff';
import { REVIEW_ID_PATTERN, type ReviewDetail, type ReviewSummary } from '../../store';
import { registerPage, RouteModule } from '../page';
import { NotFound } from '../services/context';

/**
 * Reviews of held writes (docs/review.md), read-only: the list (pending first) and one review, each call
 * with its diff, the detectors' findings and whether it still applies to main. Deciding (approve, reject)
 * is the operator's, behind the login (routes/review-actions.ts).
 */

export interface ReviewRow {
  id: string;
  session: string;
  state: ReviewSummary['state'];
  calls: number;
  since: string | null;
  decidedBy: string | null;
  reason: string | null;
}

function row(r: ReviewSummary): ReviewRow {
  return {
    id: r.id,
    session: r.session,
    state: r.state,
    calls: r.calls.length,
    since: r.calls[0] ? new Date(r.calls[0].time * 1000).toISOString() : null,
    decidedBy: r.decision?.operator ?? null,
    reason: r.decision?.reason ?? null,
  };
}

/** A review with each file's unified patch (render-ready text, escaped by the template). */
export function reviewModel(detail: ReviewDetail) {
  return {
    review: {
      ...detail,
      calls: detail.calls.map((call) => ({
        ...call,
        time: new Date(call.time * 1000).toISOString(),
        patches: call.files.map((f) => ({
          path: f.path,
          patch: createTwoFilesPatch(f.path, f.path, f.before ?? '', f.after ?? '', '', '', { context: 2 }).split('\n').slice(4).join('\n'),
        })),
      })),
    },
  };
}

export const reviewsRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/reviews',
    view: 'pages/reviews.njk',
    load: async (_req, ctx) => ({ reviews: (await ctx.store.reviews()).map(row) }),
    title: () => 'Reviews',
  });
  registerPage(router, deps, {
    path: '/reviews/:id',
    view: 'pages/review.njk',
    load: async (req, ctx) => {
      const id = String(req.params.id);
      if (!REVIEW_ID_PATTERN.test(id)) throw new NotFound(`no review ${JSON.stringify(id.slice(0, 40))} in this store`);
      return reviewModel(await ctx.store.review(id));
    },
    title: (m) => `Review ${m.review.id}`,
  });
};
