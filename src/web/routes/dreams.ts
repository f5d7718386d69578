import { registerPage, RouteModule } from '../page';

/**
 * Dreams (issue 28, docs/dreams.md), read-only: the store's dreams and one dream with its status, inputs,
 * instructions, usage and the review its branch became. Starting one is the operator's, behind the login
 * (routes/dream-actions.ts: GET /dreams/new, POST /dreams), as well as the CLI's and the server API's.
 */
export const dreamsRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/dreams',
    view: 'pages/dreams.njk',
    load: async (_req, ctx) => ({ dreams: ctx.store.dreams() }),
    title: () => 'Dreams',
  });
  registerPage(router, deps, {
    path: '/dreams/:id',
    view: 'pages/dream.njk',
    load: async (req, ctx) => ({ dream: ctx.store.dream(String(req.params.id)) }),
    // The operator's form (routes/dream-actions.ts), not a dream.
    skip: (req) => req.params.id === 'new',
    title: (m) => `Dream ${m.dream.id}`,
  });
};
