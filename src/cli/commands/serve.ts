import { Command, InvalidArgumentError } from 'commander';
import { newOperatorToken, tokenProblem } from '../../operator/token';
import { CacheBudget, type MemoryStore, registerHolder } from '../../store';
import { heapLine, tuneHeapForServing } from '../heap';
import { fail, openStore, parsePositiveByteCount, repoOption } from '../options';
import type { CliServices, RunningStoreUi, StoreUiService } from '../services';

export function registerServe(program: Command, services: CliServices): void {
  program
    .command('serve')
    .summary('serve the audit UI for a store (rollbacks need the operator token it prints)')
    .description(
      'Serve the audit UI: commits, diffs, sessions, blame and history in the browser.\n' +
        'Binds to 127.0.0.1 by default; every page also has a JSON twin under /api.',
    )
    .addOption(repoOption())
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', (v) => parsePort(v), 3000)
    .option('--allowed-host <host>', 'also answer requests for this Host (a LAN address or name); repeatable', collectHost, [] as string[])
    .option('--cache-size <size>', 'memory the store and its UI may use for caches, together (e.g. 32mb, 256mb)', parsePositiveByteCount, SERVE_CACHE_BYTES)
    .option('--public-url <url>', 'the URL browsers use behind a reverse proxy (its host is allowed; X-Forwarded-Proto from a loopback proxy is trusted)', parsePublicUrl)
    .addHelpText(
      'after',
      '\nRequests are answered only for Host names the server knows (DNS rebinding): localhost, 127.0.0.1,\n' +
        '[::1], the --host it binds, every --allowed-host and the --public-url host; any other Host gets 421.\n' +
        'The start-up lines say which.\n\nExamples:\n' +
        '  memgit serve --repo ./memories-repo\n' +
        '  memgit serve --host 0.0.0.0 --allowed-host 192.168.1.20 --allowed-host memory.lan\n' +
        '  memgit serve --port 8080 --public-url https://memory.example.com   # behind nginx/caddy on this machine',
    )
    .action(async (options: ServeCliOptions) => {
      tuneHeapForServing(); // before the store opens: its heap grows under these flags (src/cli/heap.ts)
      // One budget for every cache of the store and its UI (objects, trees, blobs, texts, blames, diffs).
      await serveUntilStopped(await openStore(options.repo, { create: false, cacheBudget: new CacheBudget(options.cacheSize) }), { ...options, command: 'memgit serve' }, services.storeUi);
    });
}

/**
 * The caches of `memgit serve`, all together (estimated bytes of what they retain): without one budget
 * each cache has its own bound, and those add up to over 240 MB (docs/performance.md).
 */
export const SERVE_CACHE_BYTES = 64 * 1024 * 1024;

interface ServeCliOptions {
  repo?: string;
  cacheSize: number;
  host: string;
  port: number;
  allowedHost?: string[];
  publicUrl?: URL;
}

/**
 * Serve the audit UI on an open store until SIGINT/SIGTERM, then close both. Shared by `memgit serve` and
 * `memgit demo`, so the demo always shows the same UI.
 */
export async function serveUntilStopped(
  store: MemoryStore,
  options: { host: string; port: number; command: string; allowedHost?: string[]; publicUrl?: URL },
  storeUi: StoreUiService,
): Promise<RunningStoreUi> {
  // State-changing routes (rollback) need this token: MEMGIT_TOKEN, or a fresh one printed below.
  const fromEnv = process.env.MEMGIT_TOKEN;
  const problem = fromEnv === undefined ? null : tokenProblem(fromEnv);
  if (problem) {
    await store.close();
    fail(`MEMGIT_TOKEN: ${problem}`);
  }
  const token = fromEnv ?? newOperatorToken();
  let server: RunningStoreUi;
  try {
    const allowedHosts = [...(options.allowedHost ?? []), ...(options.publicUrl ? [options.publicUrl.host] : [])];
    server = await storeUi.start(store, {
      host: options.host,
      port: options.port,
      allowedHosts,
      trustProxy: options.publicUrl ? 'loopback' : undefined,
      publicUrl: options.publicUrl?.origin,
      token,
    });
  } catch (error) {
    await store.close();
    fail(listenFailure(options.host, options.port, error as NodeJS.ErrnoException));
  }
  // From the moment it listens, a signal stops it cleanly: one that comes while it registers (a client may
  // already have been answered) waits for the registration and undoes it, rather than killing the process.
  let registration: Promise<() => void> | null = null;
  const stop = async () => {
    await server.close();
    await store.close();
    (await registration?.catch(() => null))?.();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  // Registered as the store's holder while serving, so that `memgit demo` never rebuilds it meanwhile.
  registration = registerHolder(store.gitdir, { command: options.command, url: server.url });
  await registration;
  process.stdout.write(`memgit: audit UI for ${store.dir} at ${server.url}/ (Ctrl-C to stop)\n`);
  process.stdout.write(`memgit: ${server.accessNotice}\n`);
  if (options.publicUrl) process.stdout.write(`memgit: public URL ${options.publicUrl.origin}/\n`);
  process.stdout.write(`${heapLine()}\n`);
  if (store.cacheBudget) process.stdout.write(`memgit: caches of the store and its UI: up to ${formatMib(store.cacheBudget.maxBytes)} together (--cache-size)\n`);
  process.stdout.write(`memgit: answers requests for Host ${server.allowedHosts.join(', ')}; any other Host gets 421\n`);
  if (isWildcard(options.host) && !(options.allowedHost?.length || options.publicUrl)) {
    process.stdout.write(
      `memgit: listening on every interface, but other machines reach it by an address not listed above: add --allowed-host <address or name> (or --public-url)\n`,
    );
  }
  if (store.readOnly) {
    // Nothing to log in for but reading (when reads need the login); no action is offered or taken.
    if (fromEnv === undefined && server.readsNeedLogin) process.stdout.write(`memgit: operator token (log in at ${server.url}/login to read): ${token}\n`);
    process.stdout.write('memgit: a read-only clone: no revert, restore, reset, session rollback or redaction is offered (memgit restore-from makes a writable copy)\n');
  } else if (fromEnv === undefined) {
    process.stdout.write(`memgit: operator token (log in at ${server.url}/login to revert or restore): ${token}\n`);
  }
  return server;
}

/** Why the server could not listen, and what to do about it. */
export function listenFailure(host: string, port: number, error: NodeJS.ErrnoException): string {
  if (error.code === 'EADDRINUSE') {
    return `port ${port} on ${host} is already in use; use --port 0 to pick a free port (or stop what is listening there)`;
  }
  return `cannot listen on ${host}:${port}: ${error.message}`;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('expected an integer from 0 to 65535');
  return port;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** A host name or IP literal (optionally with a port) for the Host check; wildcards are refused. */
function collectHost(value: string, previous: string[]): string[] {
  const host = value.trim().toLowerCase();
  if (!/^(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/.test(host) || host.startsWith('.') || host.includes('..')) {
    throw new InvalidArgumentError('expected a host name or IP address (e.g. memory.lan, 192.168.1.20, [fd00::1])');
  }
  return [...previous, host];
}

function parsePublicUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an absolute URL such as https://memory.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('expected an http or https URL');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) {
    throw new InvalidArgumentError('expected the origin only (scheme, host, port): the UI is served at the root');
  }
  return url;
}

/** Bytes as MiB for a start-up line (one decimal below 10 MiB). */
function formatMib(bytes: number): string {
  const mib = bytes / 1024 / 1024;
  return `${mib < 10 ? Number(mib.toFixed(1)) : Math.round(mib)} MiB`;
}
