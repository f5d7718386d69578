import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { MIN_TOKEN_LENGTH, newOperatorToken, tokenProblem } from '../../operator/token';
import { heapLine, tuneHeapForServing } from '../heap';
import { fail, parseByteCount, parsePositiveByteCount, positiveInteger, printError } from '../options';
import type { CliServices, ServerService } from '../services';

export const DEFAULT_ROOT = 'memories-repo';

interface ServerCliOptions {
  root: string;
  host: string;
  port: number;
  allowedHost: string[];
  maxOpenStores: number;
  idleSeconds: number;
  maxQueue: number;
  rateLimit: number;
  bodyLimit: string;
  bodyBudget: string;
  keyBodyBudget: string;
  keyMaxBodies: number;
  bodyTimeout: number;
  mcpMaxSessions: number;
  mcpSessionsPerKey: number;
  maxStoresPerKey: number;
  maxStoreBytes: number;
  cacheSize: number;
  maxDreams: number;
  fleetRemote?: string;
  fleetNode?: string;
  fleetTokenEnv?: string;
  ack: string;
}

export function registerServer(program: Command, services: CliServices): void {
  const defaults = services.server.defaults;
  program
    .command('server')
    .summary('serve many stores over HTTP: the memory tool API, the JSON read API and the audit UI')
    .description(
      'One service for every store under --root (one subfolder each, created by its first memory call when the key allows it). ' +
        'Clients authenticate with keys from `memgit keys create`. The audit UI lists the stores at / (the browser asks for a key as ' +
        'the password) and shows each one under /stores/{store}/. One JSON log line per request on stdout; SIGTERM stops gracefully.',
    )
    .addHelpText(
      'after',
      '\nEndpoints:\n' +
        '  POST /api/v1/stores/{store}/tool-calls  {"tool_use": {...}, "session": "..."}  (write keys)\n' +
        '  GET  /api/v1/stores/{store}/commits, /sessions, /files/...                    (read keys)\n' +
        '  POST /api/v1/stores/{store}/rollback/{revert|restore|session|reset}           (operator keys)\n' +
        '  POST /api/v1/stores/{store}/dreams, GET .../dreams  a dream (operator keys; at most --max-dreams at once)\n' +
        '  POST|GET|DELETE /stores/{store}/mcp   MCP (Streamable HTTP), the memory tool  (write keys)\n' +
        '  GET  /healthz',
    )
    .option('--root <dir>', 'the folder holding the stores', DEFAULT_ROOT)
    .option('--host <host>', 'interface to bind', defaults.host)
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, defaults.port)
    .option('--allowed-host <name>', 'a host name the UI answers to besides loopback and --host (behind a reverse proxy); repeatable', collect, [])
    .option('--max-open-stores <n>', 'stores kept open at once (least recently used are closed)', positiveInteger, defaults.maxOpenStores)
    .option('--idle-seconds <n>', 'close a store unused for this long', positiveInteger, defaults.idleSeconds)
    .option('--max-queue <n>', 'calls in flight per store before answering 503', positiveInteger, defaults.maxQueue)
    .option('--rate-limit <n>', 'requests per key per minute, REST and MCP (an MCP batch counts each message; 0 = unlimited)', nonNegativeInteger, defaults.rateLimit)
    .option('--body-limit <size>', 'largest request body, REST and MCP (e.g. 512kb, 8mb)', parseSize, defaults.bodyLimit)
    .option('--body-budget <size>', 'request bodies held in memory at once, all keys together (503 with Retry-After beyond)', parseSize, defaults.bodyBudget)
    .option('--key-body-budget <size>', 'request bodies held in memory at once per key (429 with Retry-After beyond)', parseSize, defaults.keyBodyBudget)
    .option('--key-max-bodies <n>', 'requests with a body in flight at once per key (429 with Retry-After beyond)', positiveInteger, defaults.keyMaxBodies)
    .option('--body-timeout <seconds>', 'a request body must arrive within this long (408 beyond)', positiveInteger, defaults.bodyTimeoutSeconds)
    .option('--mcp-max-sessions <n>', 'open MCP sessions, all keys together (503 beyond)', positiveInteger, defaults.mcpMaxSessions)
    .option('--mcp-sessions-per-key <n>', "open MCP sessions per key; a key's own longest-idle session makes room (429 when all are busy)", positiveInteger, defaults.mcpSessionsPerKey)
    .option('--max-stores-per-key <n>', 'stores one key may create (0 = unlimited)', nonNegativeInteger, defaults.maxStoresPerKey)
    .option('--max-store-bytes <size>', 'a store this large on disk takes no more writes (e.g. 512mb, 1gb; 0 = unlimited)', parseByteCount, defaults.maxStoreBytes)
    .option('--cache-size <size>', 'memory all open stores and their UI may use for caches, together (e.g. 128mb, 1gb)', parsePositiveByteCount, defaults.cacheBytes)
    .option('--max-dreams <n>', 'dreams running at once on this server, all stores together (429 beyond; docs/dreams.md)', positiveInteger, defaults.maxDreams)
    .option('--fleet-remote <url>', 'run as a node of a fleet (docs/fleet.md): every store\'s repository on the git server, with {store} in it')
    .option('--fleet-node <name>', 'this node\'s name in a fleet (default: the host name)')
    .option('--fleet-token-env <var>', 'environment variable holding the git server\'s token (fleet)')
    .option('--ack <mode>', 'fleet: acknowledge a write once the git server holds it (replicated) or once committed here (local)', 'replicated')
    .action(async (options: ServerCliOptions) => {
      tuneHeapForServing(); // before any store opens (src/cli/heap.ts)
      await runServer(options, services.server);
    });
}

/** Check the flags, then start the one composition of the server (src/compose/server.ts) and keep it up until a signal. */
async function runServer(options: ServerCliOptions, service: ServerService): Promise<void> {
  const root = path.resolve(options.root);
  if (fs.existsSync(path.join(root, '.git'))) {
    fail(`${root} is a single store, not a server root; serve it with \`memgit serve --repo ${options.root}\` or pick another --root`);
  }
  const fromEnv = process.env.MEMGIT_TOKEN;
  if (fromEnv !== undefined && fromEnv.length < MIN_TOKEN_LENGTH) fail(`MEMGIT_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters`);
  const problem = fromEnv === undefined ? null : tokenProblem(fromEnv);
  if (problem) fail(`MEMGIT_TOKEN: ${problem}`);
  const token = fromEnv ?? newOperatorToken();
  const bytes = { bodyLimit: sizeBytes(options.bodyLimit), bodyBudget: sizeBytes(options.bodyBudget), keyBodyBudget: sizeBytes(options.keyBodyBudget) };
  if (bytes.keyBodyBudget < bytes.bodyLimit) fail(`--key-body-budget (${options.keyBodyBudget}) must hold at least one body of --body-limit (${options.bodyLimit})`);
  if (bytes.bodyBudget < bytes.keyBodyBudget) fail(`--body-budget (${options.bodyBudget}) must be at least --key-body-budget (${options.keyBodyBudget})`);
  if (options.ack !== 'replicated' && options.ack !== 'local') fail('--ack must be replicated or local');
  if (!options.fleetRemote && (options.fleetNode || options.fleetTokenEnv)) fail('--fleet-node and --fleet-token-env need --fleet-remote');
  if (options.fleetRemote && !options.fleetRemote.includes('{store}')) fail('--fleet-remote must name the store with {store}, e.g. https://git.example.com/memgit/{store}.git');
  const fleet = options.fleetRemote
    ? { node: options.fleetNode ?? os.hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 64), remote: options.fleetRemote, tokenEnv: options.fleetTokenEnv ?? null, ack: options.ack as 'replicated' | 'local' }
    : undefined;
  let server: Awaited<ReturnType<ServerService['start']>>;
  try {
    server = await service.start({
      root,
      host: options.host,
      port: options.port,
      operatorToken: token,
      allowedHosts: options.allowedHost,
      bodyLimit: options.bodyLimit,
      bodies: { totalBytes: bytes.bodyBudget, perKeyBytes: bytes.keyBodyBudget, perKeyRequests: options.keyMaxBodies, timeoutMs: options.bodyTimeout * 1000 },
      rateLimitPerMinute: options.rateLimit,
      guardProcess: true,
      fleet,
      mcp: { maxSessions: options.mcpMaxSessions, sessionsPerKey: options.mcpSessionsPerKey },
      cacheBytes: options.cacheSize,
      maxDreams: options.maxDreams,
      stores: {
        maxOpen: options.maxOpenStores,
        idleMs: options.idleSeconds * 1000,
        maxQueue: options.maxQueue,
        maxStoresPerKey: options.maxStoresPerKey,
        maxStoreBytes: options.maxStoreBytes,
      },
    });
  } catch (error) {
    if ((error as Error).name === 'UnsafeRootError') fail(`refusing to serve ${root}: ${(error as Error).message}`);
    fail(`cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`);
  }
  process.stderr.write(`memgit: server for the stores in ${root} at ${server.url}/ (SIGTERM or Ctrl-C to stop)\n`);
  process.stderr.write(`${heapLine()}\n`);
  if (fleet) process.stderr.write(`memgit: fleet node ${fleet.node}, stores from ${fleet.remote}, --ack ${fleet.ack}\n`);
  if (fromEnv === undefined) process.stderr.write(`memgit: operator token for rollbacks in the UI (log in at ${server.url}/stores/<store>/login): ${token}\n`);
  const stop = (signal: string) => {
    process.stderr.write(`memgit: ${signal}: finishing the calls in flight, then closing the stores\n`);
    server.close().then(
      () => process.exit(0),
      (error: Error) => {
        printError(`error while stopping: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('expected an integer from 0 to 65535');
  return port;
}

function parseSize(value: string): string {
  if (!/^[1-9]\d*(b|kb|mb)?$/i.test(value.trim())) throw new InvalidArgumentError('expected a size such as 512kb or 8mb');
  return value.trim().toLowerCase();
}

function sizeBytes(size: string): number {
  const match = /^(\d+)(b|kb|mb)?$/.exec(size)!;
  return Number(match[1]) * { b: 1, kb: 1024, mb: 1024 * 1024 }[(match[2] ?? 'b') as 'b' | 'kb' | 'mb'];
}

/** A size in bytes: 512kb, 8mb, 1gb, a plain number of bytes, or 0 (no bound). */
function nonNegativeInteger(value: string): number {
  return value.trim() === '0' ? 0 : positiveInteger(value);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
