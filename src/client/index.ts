export { createHttpMemoryTool, httpToolCaller, HttpMemoryToolError } from './http-memory-tool';
export type { HttpMemoryToolOptions, HttpToolCallAnswer } from './http-memory-tool';
