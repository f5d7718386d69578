import { queryString, registerPage, RouteModule } from '../page';
import { commitPage } from '../services/commit';
import { COMMANDS, listCommits, parseFilter } from '../services/commits';

export const commitsRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/commits',
    view: 'pages/commits.njk',
    load: async (req, ctx) => {
      const page = await listCommits(ctx, parseFilter(req.query), {
        before: queryString(req, 'before'),
        after: queryString(req, 'after'),
      });
      return { ...page, commands: COMMANDS };
    },
    title: (m) => (Object.keys(m.filter).length ? 'Commits (filtered)' : 'Commits'),
  });
  registerPage(router, deps, {
    path: '/commits/:id',
    view: 'pages/commit.njk',
    load: async (req, ctx) => ({ ...(await commitPage(ctx, String(req.params.id))), split: req.query.view === 'split' }),
    title: (m) => m.commit.toolUseId ?? m.commit.title,
  });
};
