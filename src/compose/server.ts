import { newOperatorToken, tokenProblem } from '../operator/token';
import type { ServerAppOptions, StoreUi } from '../server/app';
import { DEFAULT_BODY_BUDGET } from '../server/body-budget';
import { DreamJobs } from '../server/dreams';
import { RunningMemgitServer, startServer, StartServerOptions } from '../server/server';
import { CacheBudget } from '../store';
import type { StoreRegistry } from '../tenancy/registry';
import { hasAnthropicKey, NO_API_KEY_MESSAGE, type UiDreams } from '../web/routes/dream-actions';
import { SERVER_DEFAULTS } from './limits';
import { mcpMount } from './mcp-mount';
import { storeUi } from './store-ui';

/**
 * The multi-store server, composed once: the tool API, the rollback API and the key checks of the server
 * edge (src/server), the audit UI of every store and its JSON twin, the read API (src/web), and MCP over
 * Streamable HTTP (src/mcp), all within the server's limits (body budgets, rate limits, per-key store
 * quotas, one cache budget, MCP session quotas, the process guard when asked). `memgit server` only parses
 * its flags and calls this; `startMemgitServer` (the package root) is this.
 */

export interface MemgitServerOptions extends Omit<StartServerOptions, 'ui'> {
  /**
   * The operator token of the audit UI's login (rollbacks and redaction in the browser, under
   * /stores/{store}/login). Default: a fresh random token, returned as `operatorToken`.
   */
  operatorToken?: string;
  /** Host names the UI answers to besides loopback and `host` (a name behind a reverse proxy). */
  allowedHosts?: string[];
  /** MCP over Streamable HTTP at /stores/{store}/mcp: its session bounds, or false for none. */
  mcp?: { maxSessions?: number; sessionsPerKey?: number } | false;
  /** Bytes all open stores and their UIs may use for caches, together (default 256 MiB). */
  cacheBytes?: number;
  /** The audit UI and read API (default: memgit's web UI); false serves neither. */
  ui?: StoreUi | false;
  /**
   * Dreams running at once on the server, all stores together (default 2; a start over it is answered
   * 429). Ignored when `dreams` is handed in (its own bound holds).
   */
  maxDreams?: number;
  /** Where MCP reports what it could not tell a client (default: stderr, `memgit: mcp: …`). */
  log?: (message: string) => void;
}

export interface RunningComposedServer extends RunningMemgitServer {
  /** The operator token the audit UI's login takes (the one given, or the one made). */
  operatorToken: string;
}

export async function startMemgitServer(options: MemgitServerOptions): Promise<RunningComposedServer> {
  const token = options.operatorToken ?? newOperatorToken();
  const problem = tokenProblem(token);
  if (problem) throw new TypeError(`operatorToken: ${problem}`);
  const maxDreams = options.maxDreams ?? SERVER_DEFAULTS.maxDreams;
  if (!Number.isSafeInteger(maxDreams) || maxDreams < 1) throw new TypeError(`maxDreams: expected a positive integer, got ${JSON.stringify(options.maxDreams)}`);
  const host = options.host ?? SERVER_DEFAULTS.host;
  // One budget for the caches of every open store and of its audit UI: memory does not grow with the
  // number of stores one key opens (docs/reliability.md has the whole bound).
  const cacheBudget = new CacheBudget(options.cacheBytes ?? SERVER_DEFAULTS.cacheBytes);
  // Dreams run in the background, the SDK's client made from the environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL).
  const dreams = options.dreams ?? new DreamJobs({ client: () => new (require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk')).default(), maxConcurrent: maxDreams });
  // The UI's "Start a dream" is one of those jobs: the same bound, the store held open while it runs.
  let registry: StoreRegistry | null = null;
  const uiDreams: UiDreams = {
    // Dream jobs handed in carry their own client; the server's own make it from the environment.
    unavailable: () => (options.dreams || hasAnthropicKey() ? null : NO_API_KEY_MESSAGE),
    start: async (_store, storeId, request) => {
      if (!registry || storeId === null) throw new Error('the server is not serving stores yet');
      const inputs = request.sessions.length ? [{ type: 'sessions', session_ids: request.sessions }] : [];
      return dreams.start(registry, storeId, { inputs, model: request.model, instructions: request.instructions });
    },
  };
  const ui = options.ui === false ? undefined : (options.ui ?? storeUi(token, [host, ...(options.allowedHosts ?? [])], cacheBudget, uiDreams));
  const log = options.log ?? ((message: string) => process.stderr.write(`memgit: mcp: ${message}\n`));
  const mcp =
    options.mcp === false
      ? null
      : mcpMount({
          maxSessions: options.mcp?.maxSessions ?? SERVER_DEFAULTS.mcpMaxSessions,
          maxSessionsPerOwner: options.mcp?.sessionsPerKey ?? SERVER_DEFAULTS.mcpSessionsPerKey,
          bodyTimeoutMs: options.bodies?.timeoutMs ?? DEFAULT_BODY_BUDGET.timeoutMs,
          log,
        });
  const extra = options.mount;
  const mount: ServerAppOptions['mount'] = (app, tools) => {
    mcp?.mount(app, tools);
    extra?.(app, tools);
  };
  let server: RunningMemgitServer;
  try {
    server = await startServer({
      ...options,
      host,
      ui,
      mount,
      dreams,
      stores: { ...options.stores, storeOptions: { cacheBudget, ...options.stores?.storeOptions } },
    });
  } catch (error) {
    await mcp?.close();
    throw error;
  }
  registry = server.registry;
  let closing: Promise<void> | null = null;
  return {
    ...server,
    operatorToken: token,
    // MCP sessions hold open event streams: close them first, or the HTTP server never finishes closing.
    close: () => (closing ??= (mcp ? mcp.close() : Promise.resolve()).then(() => server.close())),
  };
}
