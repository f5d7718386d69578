import type { Request } from 'express';
import { queryString, registerPage, RouteModule } from '../page';
import { AuditContext, BadRequest } from '../services/context';
import { listSessions, SessionPage, sessionPage, SessionSummary } from '../services/sessions';

async function loadSession(req: Request, ctx: AuditContext, id: string) {
  const from = queryString(req, 'from');
  if (from !== undefined && !/^\d{1,9}$/.test(from)) throw new BadRequest('from must be a step number');
  return { ...(await sessionPage(ctx, id, from ? Number(from) : 1)), split: req.query.view === 'split' };
}

type SessionModel = SessionPage & { split: boolean };

export const sessionsRoutes: RouteModule = (router, deps) => {
  // `/sessions?id=<id>` is the session's page too: the form of its links when the id is `.` or `..`
  // (older stores may hold such ids), which a browser would resolve away in `/sessions/<id>`.
  registerPage<{ sessions: SessionSummary[] } | SessionModel>(router, deps, {
    path: '/sessions',
    view: (m) => ('sessions' in m ? 'pages/sessions.njk' : 'pages/session.njk'),
    load: async (req, ctx) => {
      const id = queryString(req, 'id');
      return id === undefined ? { sessions: await listSessions(ctx) } : loadSession(req, ctx, id);
    },
    title: (m) => ('sessions' in m ? 'Sessions' : `Session ${m.id}`),
  });
  registerPage(router, deps, {
    path: '/sessions/:id',
    view: 'pages/session.njk',
    load: (req, ctx) => loadSession(req, ctx, String(req.params.id)),
    title: (m) => `Session ${m.id}`,
  });
};
