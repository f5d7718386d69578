/**
 * The store's front door: everything outside src/store — the edges (src/web, src/server, src/mcp,
 * src/agent, src/cli, src/client), the many-stores registry, the package root (src/index.ts) and the read
 * model (src/history) — imports the store from here, and from nowhere else in src/store. What is not named
 * here is the store's own business. (test/store/front-door.test.ts checks the imports, lists the few
 * exceptions with their reasons, and checks that edges do not reach into a store's parts: its history
 * index, objects, trees, call log, timeline, flags or redaction port.)
 *
 * Nothing in src/store imports this file: it is only the way in.
 */

// A store, opened, called and closed.
export { MemoryStore } from './memory-store';
export { DEFAULT_AUTHOR, DEFAULT_MAX_FILE_BYTES } from './options';
export type { Author, CommitStep, ExecuteContext, ExecuteOptions, ExecutionReport, MemoryToolUse, StoreOptions, ToolResult } from './types';
export { asMemoryToolUse, runnableMemoryTool } from './sdk-tool';
export type { MemoryToolCallHook, MemoryToolOptions, RunnableMemoryTool, RunnerToolUse, ToolErrorClass } from './sdk-tool';
export { newSessionId } from './session-id';
export type { ClientInfo, CommitMeta } from './commit-message';
export { oneLine } from './commit-message';
export type { CallEntry } from './call-log';
export type { ContextClearedEvent, EventAnchor, NewTimelineEvent, TimelineEvent, TimelineRecord } from './timeline';
export { CacheBudget } from './cache-budget';
export { LruMap } from './lru-map';
export type { BudgetSlot } from './cache-budget';

// One error class per failure mode, each a MemgitError.
export * from './errors';

// Finding a store, and who holds it open.
export { findEnclosingStore } from './discover';
export { describeHolder, liveHolders, registerHolder, StoreInUseError } from './holders';
export type { StoreHolder } from './holders';

// Operations on a store beside the agent's calls: import, rollback, redaction, replication, flags, gc.
export { importMemoryDir, ImportFailedError, ImportRefusedError } from './import';
export type { ImportOptions, ImportReport } from './import';
export { contentsOf } from './rollback';
export type {
  ConflictingCall,
  RestoreOptions,
  RollbackBudget,
  RollbackConflict,
  RollbackFileDiff,
  RollbackOperation,
  RollbackOptions,
  RollbackOutcome,
  RollbackStop,
} from './rollback';
export { PREVIEW_ITEMS } from './redaction';
export type { PreviewItem, RedactionLog, RedactionOutcome, RedactionRecord, RedactionTarget, RedactOptions, VerificationReport } from './redaction';
export {
  addRemote,
  cloneStore,
  displayUrl,
  forgetRemoteState,
  getRemote,
  historyContains,
  inspectRemoteHead,
  localBranchHead,
  listRemotes,
  pullStore,
  pushToRemote,
  remoteBranchHead,
  removeRemote,
  replicationStatus,
} from './replication';
export type { CloneOptions, PullReport, PushOptions, PushReport, RemoteConfig, ReplicationPort, ReplicationStatus, ReplicatorOptions } from './replication';
export type { Finding, FlagRecord } from './flags';
export { mask } from './flags/personal-data';
export type { GcEngine, GcOptions, GcReport } from './gc';
export { REVIEW_MODES, REVIEW_ID_PATTERN, REVIEW_BRANCH_PREFIX, REVIEW_ARCHIVE_PREFIX, DEFAULT_POLICY } from './review';
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
} from './review';

// The rules of points in history (the read model resolves points with them).
export { impossibleDate, isIsoTime, parseIsoTime } from './points';
export type { RefKind } from './resolve-ref';

// Reading the memory in a commit's tree: for the read model (src/history), which reads the store's
// objects and history index; an edge asks the read model instead.
export { FILE_MODE, listFiles } from './objects';
export type { FileChange } from './objects';
export { KEEP_FILE } from './tree-draft';
export { readMemoryFiles } from './rollback/memory-state';
export { repoPathToVirtual, toRepoPath } from './git-reader';
export { currentPathOf } from './rollback';
export { DREAM_STATUSES, MAX_DREAM_INSTRUCTIONS, checkDreamRequest } from './dream';
export type { DreamRecord, DreamRequest, DreamStatus, DreamUsage, DreamInput, DreamOutput } from './dream';
export { DREAM_BRANCH_PREFIX, DREAM_ID_PATTERN, dreamSession } from './review';
