/**
 * memgit's public API: `import { MemoryStore } from 'memgit'` (this file for CommonJS; index.mts re-exports
 * it for ES modules). The package exports only its root: everything public is named here.
 */
export { MemoryStore, DEFAULT_AUTHOR, DEFAULT_MAX_FILE_BYTES } from './store';
export type {
  Author,
  StoreOptions,
  MemoryToolUse,
  ToolResult,
  ExecuteContext,
  ExecuteOptions,
  ExecutionReport,
} from './store';
export type { MemoryToolOptions, MemoryToolCallHook, RunnableMemoryTool } from './store';
export type { HistoryEntry } from './history/entry';
export type { TimelineRecord, TimelineEvent, NewTimelineEvent, EventAnchor } from './store';
export type { ClientInfo, CommitMeta } from './store';
export {
  MemgitError,
  InvalidToolUseError,
  StoreClosedError,
  CommitNotFoundError,
  NotAStoreError,
  StoreCorruptError,
  LockTimeoutError,
  RollbackRefusedError,
  StaleHeadError,
  ReadOnlyStoreError,
  ReplicationRefusedError,
  ReplicationStoppedError,
  RedactionRefusedError,
  AmbiguousRefError,
  PointNotFoundError,
  InvalidPointError,
  AmbiguousPointError,
  PathNotFoundError,
  InvalidReviewPolicyError,
  ReviewNotFoundError,
  ReviewRefusedError,
  InvalidDreamError,
  DreamNotFoundError,
  DreamRunningError,
  SessionKeyError,
  ERROR_CODES,
} from './store';
export type { ErrorCode } from './store';
export type { RollbackOptions, RestoreOptions, RollbackOutcome, RollbackOperation, RollbackConflict, ConflictingCall } from './store';
export { newSessionId } from './store';
export { REVIEW_MODES } from './store';
export type {
  ApproveOutcome,
  DecideOptions,
  PolicyChange,
  PolicyRecord,
  PolicyUpdate,
  ReviewCall,
  ReviewCallDetail,
  ReviewDecision,
  ReviewDetail,
  ReviewMode,
  ReviewPolicy,
  ReviewState,
  ReviewSummary,
} from './store';
export { importMemoryDir, ImportFailedError, ImportRefusedError } from './store';
export type { ImportOptions, ImportReport } from './store';
export { StoreInUseError } from './store';
export { listCalls } from './history/calls';
export { startDream, defaultDreamSessions, DREAM_SYSTEM_PROMPT, DEFAULT_DREAM_MODEL } from './dream';
export type { DreamOptions, StartedDream } from './dream';
export type { DreamRecord, DreamRequest, DreamStatus, DreamUsage, DreamInput, DreamOutput } from './store';
export { historyContext } from './history/context';
export type { HistoryContext } from './history/context';
export { parseLogFilter, InvalidFilterError } from './history/log-filter';
export type { LogFilter, LogFilterInput } from './history/log-filter';
export { queryLog } from './history/log';
export type { LogRow } from './history/log';
export { listSessions } from './history/sessions';
export { commitRecord, sessionRecord, fileRevisionRecord, callRecord, RECORD_SCHEMAS } from './history/records';
export type { CommitRecord, CallRecord, SessionRecord, FileRevisionRecord, FileChangeRecord } from './history/records';
export { runCommand } from './contract';
export type { CommandOutcome, ContractOptions, MemoryReader, TreeEdit } from './contract/types';
export { createHttpMemoryTool, httpToolCaller, HttpMemoryToolError } from './client';
export type { HttpMemoryToolOptions, HttpToolCallAnswer } from './client';
export { createMemgitClient, MemgitClientError } from './client';
export type { CommitsQuery, MemgitApi, MemgitClient, MemgitClientOptions, MemgitStoreClient, ToolUseBlock } from './client';
export type { StartServerOptions, RunningMemgitServer } from './server';
export type { MemgitServerOptions, RunningComposedServer } from './compose/server';
import type { MemgitServerOptions, RunningComposedServer } from './compose/server';

/**
 * Start `memgit server` on a root of many stores: the one composition `memgit server` runs too
 * (src/compose/server.ts: the tool API, the read API, the rollback API, the audit UI and MCP, within the
 * server's limits). Loaded on first use, so `import 'memgit'` stays light. (`startServer` serves the
 * audit UI of one open store.)
 */
export function startMemgitServer(options: MemgitServerOptions): Promise<RunningComposedServer> {
  return (require('./compose/server') as typeof import('./compose/server')).startMemgitServer(options);
}
export {
  StoreRegistry,
  StoreNotFoundError,
  QueueFullError,
  RegistryClosedError,
  InvalidStoreIdError,
  KeyError,
  StoreFullError,
  StoreIdTakenError,
  StoreQuotaError,
  UnsafeRootError,
  StoreFencedError,
  StoreSyncingError,
  NotReplicatedError,
  placeStore,
  placementBalance,
  createKey,
  listKeys,
  revokeKey,
  isValidStoreId,
} from './tenancy';
export type { RegistryOptions, StoreSummary, Scope, KeyInfo, AckMode, FleetOptions, FleetHealth } from './tenancy';
export { startServer } from './web/server';
export type { ServerOptions, RunningServer } from './web/server';
export { createApp } from './web/app';
export type { AppOptions } from './web/app';
export type { RouteModule } from './web/page';
export { operatorRoutes, rollbackRoutes } from './web/routes/operator';
export type { OperatorRouteOptions, RollbackRouteOptions } from './web/routes/operator';
export type { McpHttpHandler, McpHttpHandlerOptions, McpHttpRequest } from './mcp/http';
import type { McpHttpHandler, McpHttpHandlerOptions, McpHttpRequest } from './mcp/http';

/**
 * The memory tool over MCP's Streamable HTTP transport, as an express-mountable handler (src/mcp/http):
 * loaded on first use, like startMemgitServer, so that `import 'memgit'` does not load the MCP SDK.
 */
export function createMcpHttpHandler<Req extends McpHttpRequest = McpHttpRequest>(options: McpHttpHandlerOptions<Req>): McpHttpHandler<Req> {
  return (require('./mcp/http') as typeof import('./mcp/http')).createMcpHttpHandler(options);
}
export { ChatSession } from './agent/chat-session';
export type { ChatSessionOptions, CompactionOptions, ContextEvent, MemoryCall } from './agent/chat-session';
