import { encodePath, url } from '../filters';
import { queryString, registerPage, RouteModule, wildcardPath } from '../page';
import { filePage, rawFile, unprefixedTarget } from '../services/files';
import { treePage } from '../services/tree';

export const filesRoutes: RouteModule = (router, deps) => {
  // `/files/memories/a.md` (the path as pages show it) is `/files/a.md`; a folder's is its tree page.
  router.get(['/files/*path', '/raw/*path'], async (req, res, next) => {
    const at = queryString(req, 'at');
    const target = await unprefixedTarget(deps.ctx, wildcardPath(req), at);
    if (!target) return next();
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    const kind = req.path.startsWith('/raw/') ? 'raw' : 'files';
    if (target.kind === 'file') return res.redirect(302, `/${kind}/${encodePath(target.rel)}${query}`);
    if (kind === 'raw') return next();
    res.redirect(302, url('/tree', { at, dir: target.rel }));
  });
  registerPage(router, deps, {
    path: '/files/*path',
    view: 'pages/file.njk',
    load: async (req, ctx) => {
      const wantBlame = req.query.blame !== '0';
      const page = await filePage(ctx, wildcardPath(req), queryString(req, 'at'), { blame: wantBlame });
      return { ...page, blame: wantBlame && page.blamed };
    },
    title: (m) => m.path,
  });
  registerPage(router, deps, {
    path: '/tree',
    view: 'pages/tree.njk',
    load: (req, ctx) => treePage(ctx, queryString(req, 'at'), (queryString(req, 'dir') ?? '').replace(/^\/+|\/+$/g, '').replace(/^memories(\/|$)/, '')),
    title: (m) => `${m.path} at ${m.at.commit.slice(0, 10)}`,
  });
  // Raw content is never rendered: a plain-text attachment the browser will not sniff into HTML.
  router.get('/raw/*path', async (req, res) => {
    const { name, text } = await rawFile(deps.ctx, wildcardPath(req), queryString(req, 'at'));
    res.attachment(name);
    res.type('text/plain; charset=utf-8').send(text);
  });
};
