import { Command, InvalidArgumentError } from 'commander';
import type { MemoryStore } from '../../store/memory-store';
import type { RunningServer } from '../../web/server';
import { registerHolder } from '../../store/holders';
import { fail, openStore, repoOption } from '../options';

export function registerServe(program: Command): void {
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
    .action(async (options: { repo?: string; host: string; port: number }) => {
      await serveUntilStopped(await openStore(options.repo, { create: false }), { ...options, command: 'memgit serve' });
    });
}

/**
 * Serve the audit UI on an open store until SIGINT/SIGTERM, then close both. Shared by `memgit serve` and
 * `memgit demo`, so the demo always shows the same UI.
 */
export async function serveUntilStopped(store: MemoryStore, options: { host: string; port: number; command: string }): Promise<RunningServer> {
  // The web stack loads only when a server starts, so the CLI's other commands start faster.
  const { startServer } = require('../../web/server') as typeof import('../../web/server');
  const { newOperatorToken, tokenProblem } = require('../../web/auth') as typeof import('../../web/auth');
  const { rollbackRoutes } = require('../../web/routes/rollback') as typeof import('../../web/routes/rollback');
  // State-changing routes (rollback) need this token: MEMGIT_TOKEN, or a fresh one printed below.
  const fromEnv = process.env.MEMGIT_TOKEN;
  const problem = fromEnv === undefined ? null : tokenProblem(fromEnv);
  if (problem) {
    await store.close();
    fail(`MEMGIT_TOKEN: ${problem}`);
  }
  const token = fromEnv ?? newOperatorToken();
  let server: RunningServer;
  try {
    server = await startServer({ store, host: options.host, port: options.port, routes: [rollbackRoutes({ token })] });
  } catch (error) {
    await store.close();
    fail(listenFailure(options.host, options.port, error as NodeJS.ErrnoException));
  }
  // Registered as the store's holder while serving, so that `memgit demo` never rebuilds it meanwhile.
  const unregister = await registerHolder(store.gitdir, { command: options.command, url: server.url });
  process.stdout.write(`memgit: audit UI for ${store.dir} at ${server.url}/ (Ctrl-C to stop)\n`);
  process.stdout.write(`memgit: ${server.accessNotice}\n`);
  if (fromEnv === undefined) process.stdout.write(`memgit: operator token (log in at ${server.url}/login to revert or restore): ${token}\n`);
  const stop = async () => {
    await server.close();
    await store.close();
    unregister();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
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
