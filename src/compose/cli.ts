import { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, MIN_COMPACTION_TRIGGER } from '../agent/chat-defaults';
import { DEFAULT_DEMO_DIR } from '../agent/demo/defaults';
import { COMPACTED_SESSION, INJECTED_SESSION, INJECTED_TOOL_USE_ID } from '../agent/demo/transcript';
import { runProgram } from '../cli/program';
import type { CliServices } from '../cli/services';
import { SERVER_DEFAULTS } from './limits';

/**
 * The CLI as the process runs it: its commands (src/cli) with what they run from the other edges — the
 * multi-store server (./server.ts), the audit UI of one store (src/web), MCP over stdio (src/mcp), a
 * conversation, the demo's build and the sandbox (src/agent). Each loads on first use, so a command that needs none of
 * them (exec above all) starts without the web stack, the MCP SDK or the Anthropic SDK.
 */
export const cliServices: CliServices = {
  server: {
    defaults: SERVER_DEFAULTS,
    start: (options) => (require('./server') as typeof import('./server')).startMemgitServer(options),
  },
  storeUi: {
    start: (store, options) => {
      const { startServer } = require('../web/server') as typeof import('../web/server');
      const { operatorRoutes } = require('../web/routes/operator') as typeof import('../web/routes/operator');
      const { token, ...rest } = options;
      return startServer({ store, ...rest, routes: [operatorRoutes({ token })] });
    },
  },
  mcp: {
    serve: (store, options) => (require('../mcp/stdio') as typeof import('../mcp/stdio')).serveMcpOverStdio(store, options),
  },
  chat: {
    defaults: { model: DEFAULT_MODEL, maxTokens: DEFAULT_MAX_TOKENS, minCompactionTrigger: MIN_COMPACTION_TRIGGER },
    open: (options) => {
      const { default: Anthropic } = require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk');
      const { ChatSession } = require('../agent/chat-session') as typeof import('../agent/chat-session');
      const { describeApiError } = require('../agent/api-error') as typeof import('../agent/api-error');
      const client = new Anthropic();
      const chat = new ChatSession({ client, ...options });
      return { send: async (text) => void (await chat.send(text)), describeError: (error) => describeApiError(error, client.baseURL) };
    },
  },
  demo: {
    defaultDir: DEFAULT_DEMO_DIR,
    story: { injectedSession: INJECTED_SESSION, injectedToolUseId: INJECTED_TOOL_USE_ID, compactedSession: COMPACTED_SESSION },
    lockDir: (dir) => (require('../agent/demo/build') as typeof import('../agent/demo/build')).lockDemoDir(dir),
    build: (dir, options) => (require('../agent/demo/build') as typeof import('../agent/demo/build')).buildDemoStore(dir, options),
  },
  sandbox: {
    get notesPath() {
      return (require('../agent/sandbox') as typeof import('../agent/sandbox')).SANDBOX_NOTES;
    },
    start: (address, options) => (require('../agent/sandbox') as typeof import('../agent/sandbox')).startSandbox(address, options),
  },
};

/** Run `memgit` on `argv` (the bin, src/cli/main.ts, calls this). */
export function runCli(argv: string[]): Promise<void> {
  return runProgram(argv, cliServices);
}
