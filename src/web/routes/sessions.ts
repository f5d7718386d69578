import { queryString, registerPage, RouteModule } from '../page';
import { BadRequest } from '../services/context';
import { listSessions, sessionPage } from '../services/sessions';

export const sessionsRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/sessions',
    view: 'pages/sessions.njk',
    load: async (_req, ctx) => ({ sessions: await listSessions(ctx) }),
    title: () => 'Sessions',
  });
  registerPage(router, deps, {
    path: '/sessions/:id',
    view: 'pages/session.njk',
    load: async (req, ctx) => {
      const from = queryString(req, 'from');
      if (from !== undefined && !/^\d{1,9}$/.test(from)) throw new BadRequest('from must be a step number');
      return { ...(await sessionPage(ctx, String(req.params.id), from ? Number(from) : 1)), split: req.query.view === 'split' };
    },
    title: (m) => `Session ${m.id}`,
  });
};
