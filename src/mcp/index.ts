/** memgit as an MCP server: the `memory` tool (and memory:// resources) over stdio or Streamable HTTP. */
export { createMemoryMcpServer, type MemoryMcpServerOptions } from './server';
export { serveMcpOverStdio, type RunningStdioMcp, type StdioMcpOptions } from './stdio';
export { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions, type McpHttpRequest, type McpTarget } from './http';
export { type StoreAccess } from './store-access';
export { MCP_ANSWERS, mcpRefusal, type McpRefusal } from './errors';
export { MEMORY_TOOL, MEMORY_TOOL_NAME, META_CALL_ID, META_COMMIT } from './memory-tool';
export { newMcpCallId, newMcpSessionId } from './ids';
export { resourceUri, relPathOfUri } from './resources';
