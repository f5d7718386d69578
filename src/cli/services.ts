import type { MemoryStore } from '../store';
import type { ContextEvent, MemoryCall } from '../terminal/calls';

/**
 * What the CLI runs that lives in another edge — the multi-store server, the audit UI of one store, MCP
 * over stdio, a conversation with Claude, the demo's build — as the CLI sees it. The composition
 * (src/compose/cli.ts) hands these to `buildProgram`, so the CLI imports no other edge: it parses flags,
 * prints, and calls these.
 */
export interface CliServices {
  server: ServerService;
  storeUi: StoreUiService;
  mcp: McpStdioService;
  chat: ChatService;
  demo: DemoService;
  sandbox: SandboxService;
}

/** `memgit server`: the multi-store server (src/compose/server.ts). */
export interface ServerService {
  /** The defaults of its limits, as the flags show them. */
  defaults: {
    host: string;
    port: number;
    maxOpenStores: number;
    idleSeconds: number;
    maxQueue: number;
    rateLimit: number;
    bodyLimit: string;
    bodyBudget: string;
    keyBodyBudget: string;
    keyMaxBodies: number;
    bodyTimeoutSeconds: number;
    mcpMaxSessions: number;
    mcpSessionsPerKey: number;
    maxStoresPerKey: number;
    maxStoreBytes: number;
    cacheBytes: number;
    maxDreams: number;
  };
  start(options: ServerStart): Promise<{ url: string; close(): Promise<void> }>;
}

export interface ServerStart {
  root: string;
  host: string;
  port: number;
  operatorToken: string;
  allowedHosts: string[];
  bodyLimit: string;
  bodies: { totalBytes: number; perKeyBytes: number; perKeyRequests: number; timeoutMs: number };
  rateLimitPerMinute: number;
  guardProcess: boolean;
  mcp: { maxSessions: number; sessionsPerKey: number };
  cacheBytes: number;
  /** Dreams running at once, all stores together. */
  maxDreams: number;
  stores: { maxOpen: number; idleMs: number; maxQueue: number; maxStoresPerKey: number; maxStoreBytes: number };
  /** A node of a fleet (docs/fleet.md): its name, the git server's URL template, the token's variable, the ack mode. */
  fleet?: { node: string; remote: string; tokenEnv: string | null; ack: 'replicated' | 'local' };
}

/** `memgit serve` and `memgit demo`: the audit UI of one open store, with the operator's routes. */
export interface StoreUiService {
  start(
    store: MemoryStore,
    options: { host: string; port: number; allowedHosts: string[]; trustProxy?: string; publicUrl?: string; token: string },
  ): Promise<RunningStoreUi>;
}

export interface RunningStoreUi {
  url: string;
  allowedHosts: string[];
  /** Whether reading needs the operator login (a UI reachable beyond loopback). */
  readsNeedLogin: boolean;
  /** One line on who may read and who may change what. */
  accessNotice: string;
  close(): Promise<void>;
}

/** `memgit mcp`: the memory tool over MCP on stdin/stdout. */
export interface McpStdioService {
  serve(store: MemoryStore, options: { session?: string; resources: boolean }): Promise<{ session: string; closed: Promise<void>; close(): Promise<void> }>;
}

/** `memgit chat`: one conversation with Claude over the store. */
export interface ChatService {
  defaults: { model: string; maxTokens: number; minCompactionTrigger: number };
  /** A conversation (its client made from the environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL). */
  open(options: ChatOpenOptions): Conversation;
}

export interface ChatOpenOptions {
  store: MemoryStore;
  session: string;
  model: string;
  system?: string;
  maxTokens: number;
  contextEditing?: boolean;
  compaction?: { trigger?: number; instructions?: string };
  stream: boolean;
  onText: (text: string) => void;
  onMemoryCall: (call: MemoryCall) => void;
  onContextEvent: (event: ContextEvent) => void;
}

export interface Conversation {
  send(text: string): Promise<void>;
  /** What to tell the user about a failure of the Messages API, or null when it is not one. */
  describeError(error: unknown): string | null;
}

/** `memgit demo`: the recorded conversations replayed into a fresh store. */
export interface DemoService {
  defaultDir: string;
  /** What the demo's story points at. */
  story: { injectedSession: string; injectedToolUseId: string; compactedSession: string };
  /** Hold the demo folder against another demo's rebuild; resolves to the release. */
  lockDir(dir: string): Promise<() => Promise<void>>;
  build(
    dir: string,
    options: {
      locked: boolean;
      review?: 'off' | 'flagged' | 'all';
      onSession: (session: { id: string; speaker: string }) => void;
      onMemoryCall: (call: MemoryCall) => void;
      onContextEvent: (event: ContextEvent) => void;
    },
  ): Promise<{ millis: number; sessions: unknown[]; commits: number; dream: { id: string; outputs: Array<{ review_id: string; files_touched: string[] }> } | null }>;
}

/** `memgit sandbox`: a scripted stand-in for the Messages API on loopback. */
export interface SandboxService {
  /** The memory file its scripted "Claude" notes what was said in. */
  notesPath: string;
  start(address: { host: string; port: number }, options: { eventDelayMs: number }): Promise<{ url: string; close(): Promise<void> }>;
}
