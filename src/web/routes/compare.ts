import { queryString, registerPage, RouteModule } from '../page';
import { comparePage } from '../services/compare';

export const compareRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/compare',
    view: 'pages/compare.njk',
    load: async (req, ctx) => ({
      ...(await comparePage(ctx, queryString(req, 'from'), queryString(req, 'to'), queryString(req, 'path'))),
      split: req.query.view === 'split',
    }),
    title: (m) => (m.from && m.to ? `Compare ${m.from.commit.slice(0, 10)}…${m.to.commit.slice(0, 10)}` : 'Compare'),
  });
};
