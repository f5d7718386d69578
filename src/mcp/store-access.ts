import type { MemoryStore } from '../store';

/** What a task on the store is, as far as reaching the store goes. */
export interface StoreUse {
  /**
   * The task is an accepted memory tool call: the one thing that may bring a store that does not exist
   * yet into being (when the connection's key may create stores). Reads of resources never do.
   */
  toolCall?: boolean;
}

/**
 * How an MCP connection reaches its store: a function that runs one task on it. Over stdio the store is
 * simply open; over HTTP the server opens it per call through its registry, so the call holds the store
 * (a queue slot, a place in the open-store LRU) only while it runs, and a session outlives the store
 * object being closed when idle and opened again. A store that cannot be had throws its coded error
 * (busy, gone, not created, shutting down): errors.ts says what the client is told.
 */
export type StoreAccess = <T>(task: (store: MemoryStore) => Promise<T>, use?: StoreUse) => Promise<T>;

export function storeAccess(store: MemoryStore | StoreAccess): StoreAccess {
  if (typeof store === 'function') return store;
  return (task) => task(store);
}
