import { registerPage, RouteModule } from '../page';
import { overview } from '../services/overview';
import { replicationView } from '../services/replication';

export const overviewRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/',
    view: 'pages/overview.njk',
    load: async (_req, ctx) => ({ ...(await overview(ctx)), replication: await replicationView(ctx) }),
    title: () => 'Overview',
  });
};
