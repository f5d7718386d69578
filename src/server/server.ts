import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { Logger } from 'pino';
import { FleetNode, FleetOptions } from '../tenancy/fleet';
import { KeyRing } from '../tenancy/keys';
import { RegistryOptions, StoreRegistry } from '../tenancy/registry';
import { checkRootSafety } from '../tenancy/root-safety';
import { createServerApp, ServerAppOptions } from './app';
import { Authorizer } from './auth';

export interface StartServerOptions extends Omit<ServerAppOptions, 'registry' | 'authorizer' | 'logger' | 'draining' | 'fleet'> {
  /** The folder holding the stores (one subfolder each) and `.memgit/keys.json`. */
  root: string;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 8080; 0 picks a free one). */
  port?: number;
  /** Bounds of the open-store LRU and of each store's queue. */
  stores?: Omit<RegistryOptions, 'root'>;
  /** Where the request log goes (default: pino, JSON lines on stdout). */
  logger?: Logger;
  /**
   * Keep serving through an unexpected rejection or exception anywhere in the process (a bug): log it
   * loudly (`memgit: UNEXPECTED …` on stderr, and the log) instead of exiting and taking every tenant's
   * calls with it. For the process that runs the server (the CLI sets it); off by default for libraries.
   */
  guardProcess?: boolean;
  /** Run as a node of a fleet (docs/fleet.md): stores checked against, and pushed to, a git server. */
  fleet?: FleetOptions;
}

/** The start of the line the process guard writes to stderr (tests look for it). */
export const UNEXPECTED_MARK = 'memgit: UNEXPECTED';

export interface RunningMemgitServer {
  url: string;
  host: string;
  port: number;
  registry: StoreRegistry;
  logger: Logger;
  /**
   * Graceful stop: refuse new requests (503), let the calls in flight finish, close idle connections,
   * then close every store. Resolves when all is closed; calling it again returns the same promise.
   */
  close: () => Promise<void>;
}

/** Start `memgit server` on a root: the HTTP tool API, the JSON read API and (if composed in) the UI. */
export async function startServer(options: StartServerOptions): Promise<RunningMemgitServer> {
  const logger = options.logger ?? pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
  const fleet = options.fleet ? new FleetNode(options.root, { log: (message) => logger.warn({ fleet: options.fleet!.node }, message), ...options.fleet }) : undefined;
  // A fleet node pushes its stores itself (acknowledging or in the background): no store replicates on its own.
  const stores = fleet ? { ...options.stores, gate: fleet, storeOptions: { ...options.stores?.storeOptions, replicate: false } } : options.stores;
  const registry = new StoreRegistry({ ...stores, root: options.root });
  fleet?.attach(registry);
  try {
    await checkRootSafety(registry.root);
  } catch (error) {
    await registry.close();
    throw error;
  }
  const unguard = options.guardProcess ? guardProcess(logger) : () => undefined;
  const authorizer = new Authorizer(new KeyRing(registry.root));
  let draining = false;
  const app = createServerApp({ ...options, registry, authorizer, logger, fleet, draining: () => draining });
  const host = options.host ?? '127.0.0.1';
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(options.port ?? 8080, host, (error?: Error) => (error ? reject(error) : resolve(s)));
      s.once('error', reject);
    });
  } catch (error) {
    unguard();
    await registry.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response ends; close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      await closed;
      clearInterval(sweep);
      await fleet?.settled();
      await options.dreams?.shutdown();
      await registry.close();
      unguard();
    })();
    return closing;
  };
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, host, port, registry, logger, close };
}

/**
 * Log an unhandled rejection or uncaught exception loudly and keep serving: one tenant's request that
 * trips a bug must not end every other tenant's calls. Returns the function that removes the guard.
 */
function guardProcess(logger: Logger): () => void {
  const report = (kind: string) => (error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    try {
      logger.fatal({ err: error, kind }, 'unexpected error: the server keeps serving; this is a bug');
    } catch {
      // The log itself failed: stderr below still says it.
    }
    process.stderr.write(`${UNEXPECTED_MARK} ${kind} (the server keeps serving; this is a bug, please report it): ${text}\n`);
  };
  const onRejection = report('unhandled rejection');
  const onException = report('uncaught exception');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
