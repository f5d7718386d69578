import { registerPage, RouteModule } from '../page';
import { overview } from '../services/overview';

export const overviewRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/',
    view: 'pages/overview.njk',
    load: (_req, ctx) => overview(ctx),
    title: () => 'Overview',
  });
};
