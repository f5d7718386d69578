import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { MemoryStore } from '../store';
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
  /** Resolves once the client has gone (stdin ended) and every request it sent has been answered. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** How long, once stdin has ended, requests still running may take to be answered (a write can wait for the lock). */
const DRAIN_LIMIT_MS = 90_000;

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
  await mcp.connect(transport);
  const unanswered = trackUnanswered(transport);
  transport.onclose = chain(transport.onclose, () => markClosed());
  const close = async () => {
    await mcp.close();
    markClosed();
  };
  // The SDK's stdio transport does not notice the client going away; stdin ending is that signal. A client
  // may end stdin right after its last request: that request still runs and is answered before we close.
  const onStdinEnd = () => void unanswered.drained(DRAIN_LIMIT_MS).then(close);
  process.stdin.once('end', onStdinEnd);
  // A client killed outright closes our stdout: answers can no longer be delivered (EPIPE), so stop.
  const onStdoutError = () => void close();
  process.stdout.once('error', onStdoutError);
  // Served more than once in a process (a library caller, the tests), each serving takes its listeners with it.
  void closed.then(() => {
    process.stdin.off('end', onStdinEnd);
    process.stdout.off('error', onStdoutError);
  });
  return { session, closed, close };
}

function chain(first: (() => void) | undefined, then: () => void): () => void {
  return () => {
    first?.();
    then();
  };
}

/** Requests received and not yet answered (cancelled ones excepted), seen at the transport. */
function trackUnanswered(transport: StdioServerTransport): { drained(limitMs: number): Promise<void> } {
  const pending = new Set<RequestId>();
  let wake: (() => void) | null = null;
  const settle = (id: RequestId) => {
    pending.delete(id);
    if (pending.size === 0) wake?.();
  };
  const receive = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) settle(id);
    }
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if (('result' in message || 'error' in message) && 'id' in message && message.id !== undefined) settle(message.id);
  };
  return {
    drained: (limitMs) =>
      new Promise<void>((resolve) => {
        if (pending.size === 0) return resolve();
        const timer = setTimeout(resolve, limitMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
  };
}
