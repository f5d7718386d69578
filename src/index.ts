/** memgit's public API: `import { MemoryStore } from 'memgit'`. */
export { MemoryStore, DEFAULT_AUTHOR, DEFAULT_MAX_FILE_BYTES } from './store/memory-store';
export type {
  Author,
  StoreOptions,
  MemoryToolUse,
  ToolResult,
  ExecuteContext,
  ExecutionReport,
} from './store/memory-store';
export type { HistoryEntry } from './store/history-index';
export type { TimelineRecord, TimelineEvent, NewTimelineEvent, EventAnchor } from './store/timeline';
export type { ClientInfo, CommitMeta } from './store/commit-message';
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
} from './store/errors';
export type { RollbackOptions, RollbackOutcome, RollbackOperation, RollbackConflict, ConflictingCall } from './store/rollback';
export { newSessionId } from './store/session-id';
export { runCommand } from './contract';
export type { CommandOutcome, ContractOptions, MemoryReader, TreeEdit } from './contract/types';
export { createHttpMemoryTool, httpToolCaller, HttpMemoryToolError } from './client';
export type { HttpMemoryToolOptions, HttpToolCallAnswer } from './client';
export type { StartServerOptions, RunningMemgitServer } from './server';
import type { StartServerOptions, RunningMemgitServer } from './server';

/** Start `memgit server` on a root (src/server): loaded on first use, so `import 'memgit'` stays light. */
export function startServer(options: StartServerOptions): Promise<RunningMemgitServer> {
  return (require('./server/server') as typeof import('./server/server')).startServer(options);
}
export { StoreRegistry, StoreNotFoundError, QueueFullError, createKey, listKeys, revokeKey, isValidStoreId } from './stores';
export type { RegistryOptions, StoreSummary, Scope, KeyInfo } from './stores';
