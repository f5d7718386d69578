import { queryString, registerPage, RouteModule } from '../page';
import { search } from '../services/search';

export const searchRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/search',
    view: 'pages/search.njk',
    load: (req, ctx) => search(ctx, queryString(req, 'q') ?? ''),
    title: (m) => (m.q ? `Search: ${m.q}` : 'Search'),
  });
};
