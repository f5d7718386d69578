/**
 * `memgit chat`'s defaults, in a file that imports nothing: the CLI's composition names them in every
 * command's start-up (the help text shows them), and the conversation itself (chat-session.ts, which loads
 * the store and the history) is loaded only when a conversation starts.
 */

/** The model `memgit chat` uses unless --model or MEMGIT_MODEL says otherwise. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';
export const DEFAULT_MAX_TOKENS = 4096;
/** The API refuses a compaction trigger below this many input tokens. */
export const MIN_COMPACTION_TRIGGER = 50_000;
