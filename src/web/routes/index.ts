import { commitsRoutes } from './commits';
import { compareRoutes } from './compare';
import { filesRoutes } from './files';
import { overviewRoutes } from './overview';
import { redactionsRoutes } from './redactions';
import { reviewsRoutes } from './reviews';
import { dreamsRoutes } from './dreams';
import { searchRoutes } from './search';
import { sessionsRoutes } from './sessions';
import type { RouteModule } from '../page';

/** Every route of the UI, in one list. New features (rollback) add their module here. */
export const ROUTE_MODULES: RouteModule[] = [overviewRoutes, commitsRoutes, sessionsRoutes, filesRoutes, searchRoutes, compareRoutes, redactionsRoutes, reviewsRoutes, dreamsRoutes];
