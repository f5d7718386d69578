import * as net from 'node:net';
import { Command, InvalidArgumentError } from 'commander';
import { fail } from '../options';
import type { CliServices } from '../services';

export const DEFAULT_SANDBOX_PORT = 8081;

interface SandboxOptions {
  host: string;
  port: number;
  delay: number;
}

export function registerSandbox(program: Command, services: CliServices): void {
  program
    .command('sandbox')
    .summary('a key-less stand-in for the Messages API, to try chat and the SDK examples')
    .description(
      'Serve a scripted Messages API on loopback, so that `memgit chat`, the TypeScript SDK\'s tool runner and the ' +
        'Python package run end to end without an API key and without the network. To every message the scripted ' +
        '"Claude" answers the same way, with real memory calls: it views /memories, notes what you said in ' +
        '/memories/notes.md (a create, then inserts), and answers in one line. Prints ANTHROPIC_BASE_URL=http://HOST:PORT ' +
        'on stdout; point the SDK there with any ANTHROPIC_API_KEY value. Runs until Ctrl-C (or SIGTERM).',
    )
    .addHelpText(
      'after',
      '\nExample:\n' +
        '  memgit sandbox                                  # in one shell\n' +
        '  export ANTHROPIC_BASE_URL=http://127.0.0.1:8081 ANTHROPIC_API_KEY=sandbox\n' +
        '  memgit chat "Remember that I prefer tabs."      # in another',
    )
    .option('--host <host>', 'loopback address to bind (127.0.0.1, ::1 or localhost)', parseLoopback, '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, DEFAULT_SANDBOX_PORT)
    .option('--delay <ms>', 'milliseconds between streamed events, to look like live typing', parseDelay, 0)
    .action(async (options: SandboxOptions) => {
      const { start, notesPath: SANDBOX_NOTES } = services.sandbox;
      let server: Awaited<ReturnType<typeof start>>;
      try {
        server = await start({ host: options.host, port: options.port }, { eventDelayMs: options.delay });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'EADDRINUSE' ? `port ${options.port} is in use (pick another with --port, or --port 0 for any free one)` : (error as Error).message;
        fail(`cannot listen on ${options.host}:${options.port}: ${why}`);
      }
      process.stdout.write(`ANTHROPIC_BASE_URL=${server.url}\n`);
      process.stderr.write(
        `memgit: sandbox: a scripted Messages API at ${server.url} (no Claude, no network). To every message it views\n` +
          `memgit: /memories, notes what was said in ${SANDBOX_NOTES}, and answers. Any API key value works; in another shell:\n` +
          `  export ANTHROPIC_BASE_URL=${server.url} ANTHROPIC_API_KEY=sandbox\n` +
          '  memgit chat "Remember that I prefer tabs."\n' +
          'memgit: Ctrl-C stops it.\n',
      );
      const stop = (signal: string) => {
        process.stderr.write(`memgit: sandbox: ${signal}, stopping\n`);
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
}

function parseLoopback(value: string): string {
  const host = value.trim();
  if (host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.'))) return host;
  throw new InvalidArgumentError('the sandbox serves loopback only: 127.0.0.1 (or another 127.x.x.x), ::1 or localhost');
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port > 65535) throw new InvalidArgumentError('expected an integer from 0 to 65535');
  return port;
}

function parseDelay(value: string): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value.trim()) || ms > 10_000) throw new InvalidArgumentError('expected milliseconds from 0 to 10000');
  return ms;
}
