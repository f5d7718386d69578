/**
 * The ES module entry of the package (`import { MemoryStore } from 'memgit'`). Everything is the CommonJS
 * build re-exported (one copy of each class, so `instanceof` works across both module systems), except
 * MemoryStore: its runnable tool must throw the ES module copy of the SDK's ToolError, the class an ES
 * module's tool runner checks with `instanceof`; the CommonJS copy would reach the model as
 * `Error: Error: …` instead of the contract's exact text.
 */
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { MemoryStore as CommonJsMemoryStore } from './index.js';

export * from './index.js';

export class MemoryStore extends CommonJsMemoryStore {
  protected static override toolError = ToolError;
}
