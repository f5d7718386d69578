/**
 * The ES module entry of the package (`import { MemoryStore } from 'memgit'`). Everything is the CommonJS
 * build re-exported (one copy of each class, so `instanceof` works across both module systems), except
 * what makes a runnable tool: MemoryStore (for store.memoryTool()) and createHttpMemoryTool. Their tools
 * must throw the ES module copy of the SDK's ToolError, the class an ES module's tool runner checks with
 * `instanceof`; the CommonJS copy would reach the model as `Error: Error: …` instead of the contract's
 * exact text.
 */
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { httpMemoryTool } from './client/http-memory-tool.js';
import { MemoryStore as CommonJsMemoryStore, type HttpMemoryToolOptions, type RunnableMemoryTool } from './index.js';

export * from './index.js';

export class MemoryStore extends CommonJsMemoryStore {
  protected static override toolError = ToolError;
}

export function createHttpMemoryTool(options: HttpMemoryToolOptions): RunnableMemoryTool {
  return httpMemoryTool(options, ToolError);
}
