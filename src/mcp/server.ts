/**
 * One MCP server for one client connection (a stdio process or an HTTP session) on one store: the
 * `memory` tool and, optionally, the memory files as read-only resources.
 *
 * The tool is served through the SDK's low-level request handlers rather than `McpServer.registerTool`:
 * registerTool validates arguments with zod before the tool runs and answers bad input with zod's text,
 * while the memory tool's errors must be the contract's. Here the arguments reach the contract untouched.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { isValidId } from '../contract/paths';
import type { MemoryStore } from '../store';
import { callMemoryTool, MEMORY_TOOL, MEMORY_TOOL_NAME } from './memory-tool';
import { codedError, INTERNAL_ERROR, INVALID_PARAMS } from './protocol-error';
import { listMemoryResources, readMemoryResource } from './resources';
import { mcpRefusal } from './errors';
import { StoreAccess, storeAccess } from './store-access';

export interface MemoryMcpServerOptions {
  /** The store, or a way to reach it per call (the server's registry opens it when a call needs it). */
  store: MemoryStore | StoreAccess;
  /** The memgit session every call of this connection is recorded under (`Memory-Session`). */
  session: string;
  /** Offer the memory files at HEAD as read-only `memory://` resources (default true). */
  resources?: boolean;
  /** Where internal failures are reported (default: stderr). Never stdout: on stdio that is the protocol. */
  log?: (message: string) => void;
  /** The server key the connection came with (memgit server): every commit records it as `Memory-Key`. */
  key?: string;
  /** That key's own review policy (docs/review.md). */
  review?: 'off' | 'flagged' | 'all';
  /** Asked before each tool call; a text refuses the call with it (see MemoryCallContext.refuse). */
  refuse?: (args: unknown, store: MemoryStore) => Promise<string | null>;
}

const INSTRUCTIONS =
  'memgit keeps your memory directory (/memories) in a git repository: use the `memory` tool to view it at the ' +
  'start of a task and to record what you learn as you go. Every change is a commit a person can audit and undo.';

export function createMemoryMcpServer(options: MemoryMcpServerOptions): McpServer {
  const { session } = options;
  const use = storeAccess(options.store);
  if (!isValidId(session)) throw new TypeError(`invalid session id ${JSON.stringify(session)}`);
  const log = options.log ?? ((message: string) => process.stderr.write(`memgit: ${message}\n`));
  const offerResources = options.resources ?? true;
  const mcp = new McpServer({ name: 'memgit', version: packageVersion() }, { instructions: INSTRUCTIONS });
  const server = mcp.server;
  server.registerCapabilities(offerResources ? { tools: {}, resources: {} } : { tools: {} });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [MEMORY_TOOL] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name !== MEMORY_TOOL_NAME) {
      throw codedError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(request.params.name)}`, 'unknown_tool');
    }
    const clientInfo = server.getClientVersion();
    return callMemoryTool(use, request.params.arguments, {
      session,
      client: { kind: 'mcp', name: clientInfo?.name, version: clientInfo?.version },
      log,
      key: options.key,
      review: options.review,
      refuse: options.refuse,
    });
  });

  if (offerResources) {
    // A store not created yet (its first tool call creates it) holds no files: an empty list, not an error.
    server.setRequestHandler(ListResourcesRequestSchema, (request) =>
      reading(() => use((store) => listMemoryResources(store, request.params?.cursor)), { resources: [] }),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => reading(() => use((store) => readMemoryResource(store, request.params.uri))));
  }
  return mcp;
}

/**
 * A resource read whose store cannot be had answers a JSON-RPC error that says why (no host path), or
 * `whenAbsent` when the store does not exist (yet).
 */
async function reading<T>(read: () => Promise<T>, whenAbsent?: T): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const refusal = mcpRefusal(error);
    if (refusal?.absent && whenAbsent !== undefined) return whenAbsent;
    if (refusal) throw codedError(INTERNAL_ERROR, refusal.message, (error as { code: string }).code);
    throw error;
  }
}

let cachedVersion: string | undefined;

/** memgit's version from its package.json, found from here both in src/ (tests) and in dist/src/. */
export function packageVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  cachedVersion = '0.0.0';
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'memgit' && typeof pkg.version === 'string') {
        cachedVersion = pkg.version;
        break;
      }
    }
    if (path.dirname(dir) === dir) break;
  }
  return cachedVersion;
}
