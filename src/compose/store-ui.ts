import * as path from 'node:path';
import express, { RequestHandler } from 'express';
import type { StoreUi } from '../server/app';
import type { CacheBudget } from '../store';
import { createApp, createViews, findViewsDir } from '../web/app';
import type { UiDreams } from '../web/routes/dream-actions';
import { operatorRoutes } from '../web/routes/operator';
import { hostCheck, securityHeaders } from '../web/security';

/**
 * The web audit UI of every store of a server root, and the store list at `/`: what the server edge
 * mounts under /stores/{id}/ and serves as its read API (the UI's JSON twins). Composed here, so that
 * the server edge never imports the web edge.
 */
export function storeUi(token: string, allowedHosts: string[], cacheBudget?: CacheBudget, dreams?: UiDreams): StoreUi {
  // One operator module for every store: one operator login (cookie) is valid across the stores. Failed
  // logins count per key (every request here carries one): one key cannot lock out another key or the
  // operator. (Operator keys roll back through the server's own API, which takes no login.)
  const operator = operatorRoutes({
    token,
    failureKey: (req) => (req.memgitKey ? `key:${req.memgitKey.id}` : `address:${req.socket.remoteAddress ?? 'unknown'}`),
    keyOf: (req) => req.memgitKey?.id,
    // "Start a dream" in a store's UI runs as one of the server's dream jobs (within --max-dreams).
    dreams,
  });
  const viewsDir = findViewsDir();
  const views = createViews(viewsDir);
  const storeViews = createViews(viewsDir);
  let readOnlyViews: ReturnType<typeof createViews> | undefined;
  const rootApp = express();
  rootApp.disable('x-powered-by');
  rootApp.use(hostCheck(allowedHosts), securityHeaders());
  rootApp.use('/static', express.static(path.join(viewsDir, 'static'), { maxAge: '1h', index: false }));
  return {
    // One template environment for the UIs of all writable stores (the same routes everywhere), and one for
    // read-only ones (the route modules set globals from that): compiled once, not per store.
    forStore: (store, storeId) =>
      createApp({
        store,
        allowedHosts,
        routes: [operator],
        serverStore: { id: storeId, listUrl: '/' },
        command: 'memgit server',
        cacheBudget,
        views: store.readOnly ? (readOnlyViews ??= createViews(viewsDir)) : storeViews,
      }) as unknown as RequestHandler,
    root: (stores) => async (req, res, next) => {
      if (req.path !== '/') return rootApp(req, res, next);
      // Rendered first (awaited in this handler), so that a failure reaches the server's error handler.
      const html = views.render('pages/stores.njk', { stores: await stores() });
      rootApp(req, res, (error?: unknown) => (error ? next(error) : res.type('html').send(html)));
    },
  };
}
