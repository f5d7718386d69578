import type { NextFunction, Request, Response } from 'express';
import type { McpHttpHandler, McpTarget } from '../mcp/http';
import type { StoreAccess } from '../mcp/store-access';
import type { ServerAppOptions } from '../server/app';
import type { MemoryStore } from '../store';
import type { KeyInfo } from '../tenancy/keys';
import { StoreNotFoundError } from '../tenancy/registry';

export interface McpMountLimits {
  maxSessions: number;
  maxSessionsPerOwner: number;
  bodyTimeoutMs: number;
  log: (message: string) => void;
}

/**
 * MCP's Streamable HTTP transport per store, at /stores/{store}/mcp behind the server's keys (write scope),
 * within the server's limits: every JSON-RPC message counts against the key's rate limit (a batch counts
 * each of its messages), bodies are read within --body-limit and the body budgets before anything else
 * happens, and a session belongs to the key that opened it. A session reaches its store through the
 * registry per call, so a call holds the store (a queue slot, a place in the LRU) only while it runs. A
 * store that does not exist yet is created only by an accepted memory tool call of a key that may create
 * stores, within its bound of stores (a session may be opened on it only while the key could create it);
 * initialize, resource reads and refused requests write nothing. Every commit of a session records the key
 * that opened it (`Memory-Key`), and a write to a store past `--max-store-bytes` is refused. A revoked
 * key's sessions are closed. What the client is told when the registry refuses is MCP's table
 * (src/mcp/errors.ts).
 */
export function mcpMount(limits: McpMountLimits): { mount: NonNullable<ServerAppOptions['mount']>; close: () => Promise<void> } {
  type Refuse = (args: unknown, store: MemoryStore) => Promise<string | null>;
  type McpRequest = Request & { memgitMcpTarget?: McpTarget; memgitMcpRefuse?: Refuse };
  let keyIsLive: (id: string) => Promise<boolean> = async () => true;
  // The MCP SDK is loaded, and the handler made, on the first request to an MCP endpoint: a server that
  // no MCP client talks to starts without it (about a fifth of its start-up).
  let made: McpHttpHandler<McpRequest> | null = null;
  const handler = (): McpHttpHandler<McpRequest> => (made ??= (require('../mcp/http') as typeof import('../mcp/http')).createMcpHttpHandler<McpRequest>({
    resolveTarget: async (req) => req.memgitMcpTarget ?? null,
    maxSessions: limits.maxSessions,
    maxSessionsPerOwner: limits.maxSessionsPerOwner,
    bodyTimeoutMs: limits.bodyTimeoutMs,
    ownerValid: (owner) => keyIsLive(owner),
    // The session's key (its owner: no other key reaches it) goes on every commit it makes.
    sessionOptions: (req) => ({ key: req.memgitKey?.id, review: req.memgitKey?.review, refuse: req.memgitMcpRefuse }),
    log: limits.log,
  }));
  return {
    mount: (app, { authorizer, registry, rateLimit, jsonBody, fleet }) => {
      keyIsLive = (id) => authorizer.keyIsLive(id);
      // Only an accepted tool call may create the store (and only for a key that may create stores). In a
      // fleet, a tool call that committed is acknowledged as the node's ack mode says (in replicated mode,
      // once the git server holds the store's head, which holds the call's commit), or refused truthfully.
      const storeAccess = (id: string, key: KeyInfo): StoreAccess => (task, use) =>
        registry.use(id, { create: key.create && use?.toolCall === true, key: key.id }, async (store) => {
          if (!fleet || use?.toolCall !== true) return task(store);
          const before = await store.replication().head();
          const result = await task(store);
          const after = await store.replication().head();
          if (after !== before) await fleet.acknowledge(id, store, after);
          return result;
        });
      /** Writes to a store at --max-store-bytes are refused (StoreFullError: MCP's table says it); views still work. */
      const room = (id: string): Refuse => async (args, store) => {
        if (!isView(args)) await registry.assertRoom(id, store);
        return null;
      };
      app.all(
        '/stores/:store/mcp',
        authorizer.middleware('write'),
        rateLimit(),
        (req: Request, res: Response, next: NextFunction) => (req.method === 'POST' ? jsonBody(req, res, next) : next()),
        rateLimit((req) => (Array.isArray(req.body) ? req.body.length - 1 : 0)),
        (req: McpRequest, res: Response, next: NextFunction) => {
          const id = String(req.params.store);
          const key = req.memgitKey!;
          const opensSession = req.method === 'POST' && req.headers['mcp-session-id'] === undefined;
          const reachable = async (): Promise<boolean> => {
            if (!opensSession && key.create) return true;
            if (await registry.exists(id)) return true;
            if (!key.create) return false;
            // A session on a store that does not exist yet: only while this key could create it (its first
            // tool call will); an id it may not create, or a key at its bound of stores, is refused now.
            await registry.assertCreatable(id, key.id);
            return true;
          };
          reachable().then((ok) => {
            if (!ok) return next(new StoreNotFoundError(id));
            req.memgitMcpTarget = { storeId: id, owner: key.id, use: storeAccess(id, key) };
            req.memgitMcpRefuse = room(id);
            handler()(req, res, next);
          }, next);
        },
      );
    },
    close: async () => made?.close(),
  };
}

function isView(args: unknown): boolean {
  return typeof args === 'object' && args !== null && (args as { command?: unknown }).command === 'view';
}
