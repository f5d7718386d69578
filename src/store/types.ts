import type { CommandOutcome } from '../contract/types';
import type { CacheBudget } from './cache-budget';
import type { ClientInfo, CommitMeta } from './commit-message';
import type { ReplicatorOptions } from './replication/replicator';

/**
 * The store's vocabulary, in a file of its own (no code): what opening a store takes, what a call is and
 * what it answers. The hub (memory-store.ts) and the modules beside it (the call path, the SDK tool,
 * rollback, import) all name these types from here, so none of them has to import another for a type.
 */

export interface Author {
  name: string;
  email: string;
}

export interface StoreOptions {
  /** Create and initialise a store when `repoDir` has none (default true). */
  create?: boolean;
  /** `overwrite` (default): create replaces an existing file. `error`: the reference handler's refusal. */
  createMode?: 'overwrite' | 'error';
  /** Largest memory file in UTF-8 bytes (default 1 MiB). */
  maxFileBytes?: number;
  /** Author and committer of every commit (default memgit <memgit@localhost>). */
  author?: Author;
  /** fsync objects, refs and files before acknowledging (default true). */
  fsync?: boolean;
  /** A lock left by a killed process is taken over after this long (ms, at least 5000). */
  lockStaleMs?: number;
  /** How long a write waits for another process's lock before failing (ms). */
  lockTimeoutMs?: number;
  /** Where repairs and other notable events are reported (default: stderr). */
  log?: (message: string) => void;
  /** The call log keeps the newest this many calls (reads and failures too; default 200,000; 0: no call log). */
  callLogMaxEntries?: number;
  /**
   * Pack loose objects (`gc()`) once about this many have piled up — roughly a quarter as many calls —
   * in the background after a call is acknowledged (default 20,000; 0 turns automatic packing off).
   */
  autoGcLooseObjects?: number;
  /**
   * Push to the remotes added with `--auto` after every commit, in the background (default true; see
   * src/store/replication). Options tune batching and backoff.
   */
  replicate?: boolean | ReplicatorOptions;
  /** On close, wait up to this long for a push under way or still owed (ms, default 3000). */
  replicationFlushMs?: number;
  /**
   * Flag calls that write likely secrets (secretlint's recommended rules) for operators, in the
   * background (default true). Personal data (e-mail, phone, IBAN, card numbers) is flagged only where
   * the store opts in: this option or `memgit flags --personal-data on`.
   */
  flags?: boolean;
  flagPersonalData?: boolean;
  /**
   * The time the store records (ms since the epoch, default `Date.now`): of the commits it writes (agent
   * calls, rollbacks, imports, the first commit), of call-log entries and of timeline events. For a
   * replay of recorded conversations (`memgit demo` commits each call at its recorded time). Only the
   * program that opens the store sets it: no tool call, HTTP request or MCP message can.
   */
  clock?: () => number;
  /**
   * A memory budget shared with other stores (memgit server): the store's decoded blobs, trees and pack
   * objects count against it too, beside their own bounds (see cache-budget.ts).
   */
  cacheBudget?: CacheBudget;
}

/** One commit of `writeCommits`: the new tree of `memories/` (null: empty) and the message. */
export interface CommitStep {
  memoryTree: string | null;
  meta: CommitMeta;
}

/** A Messages API tool_use block for the memory tool. */
export interface MemoryToolUse {
  type: 'tool_use';
  id: string;
  name: 'memory';
  input: unknown;
}

/** The exact block to send back to the Messages API. */
export interface ToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: true;
}

export interface ExecuteContext {
  session: string;
  /** The program that sent the call (recorded as Memory-Client trailers), e.g. an MCP client. */
  client?: ClientInfo;
  /**
   * The id of the server key the call came with (`memgit server` sets it from the key it checked): recorded
   * as the `Memory-Key` trailer and in the call log. A session belongs to the key of its first commit: a
   * call with another key (or with a key, into a session a local writer began) throws SessionKeyError.
   */
  key?: string;
  /**
   * The caller's own review policy (a server key made with `--review`): the stricter of it and the store's
   * applies. Set by the edge from what it checked, never from anything a client sends.
   */
  review?: 'off' | 'flagged' | 'all';
  /**
   * A dream's call (src/store/dream, set by the store's dream tool only): read and written on the dream's
   * branch `refs/heads/dream/<id>`, each commit with a `Memory-Dream` trailer. Never from a client.
   */
  dream?: string;
}

export interface ExecuteOptions {
  /**
   * Resolve only once the call has settled: its working-tree file and the git index written too. By
   * default an applied call resolves as soon as its commit is durable, and those follow under the write
   * lock (see `settled()`). For edges whose clients cannot wait for them otherwise (HTTP, MCP).
   */
  settle?: boolean;
}

/** What `execute` did, for callers that want more than the tool_result (the CLI, chat logging). */
export interface ExecutionReport {
  result: ToolResult;
  outcome: CommandOutcome | null;
  /** The commit this call made or, for a retried id, the commit it made the first time. */
  commit?: string;
  /** True when the id was already committed and nothing new was written. */
  replayed?: boolean;
  /** The HEAD the call read the memory at (absent when it was refused before reading). */
  readAt?: string;
  /**
   * A write held for review (docs/review.md): it was committed on its session's review branch, not main.
   * The tool_result is exactly the contract's; only the report (and the HTTP and MCP answers) say so.
   */
  review?: { id: string; state: 'pending' };
}
