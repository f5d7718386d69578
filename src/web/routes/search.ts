import { queryString, registerPage, RouteModule } from '../page';
import { BadRequest } from '../services/context';
import { search, STOP_NOTICES } from '../services/search';

export const searchRoutes: RouteModule = (router, deps) => {
  deps.views.addGlobal('searchStopNotices', STOP_NOTICES);
  registerPage(router, deps, {
    path: '/search',
    view: 'pages/search.njk',
    load: (req, ctx) => {
      const from = queryString(req, 'from');
      if (from !== undefined && !/^\d{1,9}$/.test(from)) throw new BadRequest('from must be a file number');
      return search(ctx, queryString(req, 'q') ?? '', from === undefined ? 0 : Number(from));
    },
    title: (m) => (m.q ? `Search: ${m.q}` : 'Search'),
  });
};
