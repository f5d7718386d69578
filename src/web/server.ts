import type { AddressInfo } from 'node:net';
import type { MemoryStore } from '../store';
import { createApp, AppOptions } from './app';
import { accessNotice, accessPolicy, allowedHostNames } from './security';
import { historyContext } from '../history/context';
import { completeFactsInBackground } from '../history/summary';

export interface ServerOptions extends Omit<AppOptions, 'store'> {
  store: MemoryStore;
  /** Interface to bind (default 127.0.0.1: loopback only). */
  host?: string;
  /** Port (default 3000; 0 picks a free one). */
  port?: number;
}

export interface RunningServer {
  /** The base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  /** The host names the Host check lets through (loopback names, the bound host, `allowedHosts`). */
  allowedHosts: string[];
  host: string;
  port: number;
  /** Reading needs the operator login (bound beyond loopback, unless readsNeedLogin said otherwise). */
  readsNeedLogin: boolean;
  /** One line for the start-up output: who may read. */
  accessNotice: string;
  /** Stop accepting connections, let requests in flight finish (a few seconds at most), close the rest. The store stays open (it belongs to the caller). */
  close: () => Promise<void>;
}

/** How long close() lets requests in flight finish before it cuts their connections. */
const CLOSE_GRACE_MS = 3000;

/** Start the audit UI over an open store. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const allowedHosts = [...(options.allowedHosts ?? []), host];
  const policy = accessPolicy({ host, publicUrl: options.publicUrl, readsNeedLogin: options.readsNeedLogin });
  const app = createApp({ ...options, allowedHosts, readsNeedLogin: policy.readsNeedLogin });
  const server = await new Promise<import('node:http').Server>((resolve, reject) => {
    const s = app.listen(options.port ?? 3000, host, (error?: Error) => (error ? reject(error) : resolve(s)));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  completeFactsInBackground(historyContext(options.store));
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    allowedHosts: allowedHostNames(allowedHosts),
    host,
    port,
    readsNeedLogin: policy.readsNeedLogin,
    accessNotice: accessNotice(policy, options.publicUrl?.replace(/\/+$/, '') ?? `http://${urlHost}:${port}`, options.store.readOnly),
    close: () =>
      new Promise<void>((resolve, reject) => {
        // A browser keeps connections open (and opens spare ones it may never use); close each as it goes
        // idle, and after a grace period close whatever is left, so that stopping never hangs on a client.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const cutoff = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close((error) => {
          clearInterval(sweep);
          clearTimeout(cutoff);
          return error ? reject(error) : resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
