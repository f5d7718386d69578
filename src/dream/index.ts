/** Dreams (issue 28): the runner, below the edges (the CLI and the server both start dreams). */
export * from './run';
export { sessionListText, sessionReadText, SESSION_PAGE_CALLS, SESSION_LIST_PAGE } from './session-tools';
