import { OBJECT_ID_LIKE } from '../../contract/ids';
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
  // A link names its kind: /commits/<commit id> (full or abbreviated) finds only commits, /calls/<tool_use
  // id> only calls, so a call whose id spells a commit id can never stand in for that commit.
  // /commits/<anything else> is an older link to a call (no commit id looks like it) and still works.
  registerPage(router, deps, {
    path: '/commits/:id',
    view: 'pages/commit.njk',
    load: async (req, ctx) => {
      const id = String(req.params.id);
      return { ...(await commitPage(ctx, id, OBJECT_ID_LIKE.test(id) ? 'commit' : 'call')), split: req.query.view === 'split' };
    },
    title: (m) => m.commit.toolUseId ?? m.commit.title,
  });
  registerPage(router, deps, {
    path: '/calls/:id',
    view: 'pages/commit.njk',
    load: async (req, ctx) => ({ ...(await commitPage(ctx, String(req.params.id), 'call')), split: req.query.view === 'split' }),
    title: (m) => m.commit.toolUseId ?? m.commit.title,
  });
};
