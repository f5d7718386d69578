import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { MemoryStore } from '../store/memory-store';
import { newMcpSessionId } from './ids';
import { createMemoryMcpServer } from './server';

export interface StdioMcpOptions {
  /** The memgit session of this process (default: a new `sess_…` id). */
  session?: string;
  resources?: boolean;
  log?: (message: string) => void;
}

export interface RunningStdioMcp {
  session: string;
  /** Resolves once the client has gone (stdin ended or closed) and the server is closed. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serve the memory tool over this process's stdin/stdout: one process is one client and one memgit
 * session. Nothing but protocol messages may ever reach stdout.
 */
export async function serveMcpOverStdio(store: MemoryStore, options: StdioMcpOptions = {}): Promise<RunningStdioMcp> {
  const session = options.session ?? newMcpSessionId();
  const mcp = createMemoryMcpServer({ store, session, resources: options.resources, log: options.log });
  const transport = new StdioServerTransport();
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  transport.onclose = () => markClosed();
  await mcp.connect(transport);
  const close = async () => {
    await mcp.close();
    markClosed();
  };
  // The SDK's stdio transport does not notice the client going away; stdin ending is that signal.
  process.stdin.once('end', () => void close());
  process.stdin.once('close', () => void close());
  return { session, closed, close };
}
