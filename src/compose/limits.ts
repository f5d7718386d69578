/**
 * The multi-store server's limits when nobody says otherwise: what `memgit server` shows as its flags'
 * defaults and what `startMemgitServer` applies, written once (docs/reliability.md explains each bound).
 * Light on purpose: the CLI reads it to describe its flags without loading the server.
 */
export const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  /** Stores kept open at once (least recently used are closed). */
  maxOpenStores: 256,
  /** A store unused this long is closed. */
  idleSeconds: 60,
  /** Calls in flight per store before 503. */
  maxQueue: 64,
  /** Requests per key per minute, REST and MCP (0 = unlimited). */
  rateLimit: 1200,
  /** Largest request body. */
  bodyLimit: '8mb',
  /** Request bodies held in memory at once, all keys together. */
  bodyBudget: '128mb',
  /** Request bodies held in memory at once, per key. */
  keyBodyBudget: '32mb',
  /** Requests with a body in flight at once, per key. */
  keyMaxBodies: 64,
  /** A request body must arrive within this long. */
  bodyTimeoutSeconds: 30,
  /** Open MCP sessions, all keys together. */
  mcpMaxSessions: 1000,
  /** Open MCP sessions per key. */
  mcpSessionsPerKey: 16,
  /** Stores one key may create (0 = unlimited). */
  maxStoresPerKey: 1000,
  /** A store this large on disk takes no more writes (0 = unlimited). */
  maxStoreBytes: 1024 * 1024 * 1024,
  /** Memory all open stores and their UIs may use for caches, together. */
  cacheBytes: 256 * 1024 * 1024,
  /** Dreams running at once on the server, all stores together (docs/dreams.md). */
  maxDreams: 2,
} as const;
