import { queryString, registerPage, RouteModule } from '../page';
import { BadRequest, NotFound } from '../services/context';
import { listRedactionRows, redactionPage } from '../services/redaction';

/**
 * The audit log of redactions (refs/memgit/audit), read-only: the list and one record with its old → new
 * commit map. A record holds the match only as a hash, so these pages read like any other.
 */
export const redactionsRoutes: RouteModule = (router, deps) => {
  registerPage(router, deps, {
    path: '/redactions',
    view: 'pages/redactions.njk',
    load: async (_req, ctx) => ({ redactions: await listRedactionRows(ctx) }),
    title: () => 'Redactions',
  });
  registerPage(router, deps, {
    path: '/redactions/:id',
    view: 'pages/redaction.njk',
    load: async (req, ctx) => {
      const id = String(req.params.id);
      if (!/^r\d{1,9}$/.test(id)) throw new NotFound(`no redaction ${JSON.stringify(id)} in this store's audit log`);
      const from = queryString(req, 'from');
      if (from !== undefined && !/^\d{1,9}$/.test(from)) throw new BadRequest('from must be a row number');
      return redactionPage(ctx, id, from ? Number(from) : 0);
    },
    title: (m) => `Redaction ${m.record.id}`,
  });
};
