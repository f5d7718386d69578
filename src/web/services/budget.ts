/**
 * Per-request budgets of the audit UI: what one response may hold and how long one request may work.
 * docs/reliability.md lists them and what happens when one is reached. (The pacing of long loops is the
 * read model's: src/history/pace.ts.)
 */

export { Pacer, WorkBudget, yieldToLoop } from '../../history/pace';

/** Characters of diff text one page shows in total (a session page, a commit, a rollback preview). */
export const MAX_PAGE_DIFF_CHARS = 2 * 1024 * 1024;
