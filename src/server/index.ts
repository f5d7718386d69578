export { startServer } from './server';
export type { StartServerOptions, RunningMemgitServer } from './server';
export { createServerApp } from './app';
export type { ServerAppOptions, StoreUi, StoreListing } from './app';
export { Authorizer, presentedKey } from './auth';
export { HttpError } from './errors';
