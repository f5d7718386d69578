export { createHttpMemoryTool, httpToolCaller, HttpMemoryToolError } from './http-memory-tool';
export type { HttpMemoryToolOptions, HttpToolCallAnswer } from './http-memory-tool';
export { createMemgitClient, MemgitClientError } from './memgit-client';
export type { CommitsQuery, MemgitApi, MemgitClient, MemgitClientOptions, MemgitStoreClient, ToolUseBlock } from './memgit-client';
