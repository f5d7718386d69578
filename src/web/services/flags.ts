import { flaggedCallCount, flagOfCommit } from '../../history/flags';
import type { Finding, FlagRecord } from '../../store';
import type { AuditContext } from './context';

/**
 * Flags for the pages: a call whose writing added a likely secret (or, where the store opts in, personal
 * data) gets a badge. The flag index (src/store/flags) keeps only masked samples, never the values, so
 * what a badge shows is safe to show to anyone who may read the page.
 */

/** Findings listed in one badge's details; the rest are counted. */
const MAX_FINDINGS = 10;

export interface FlagBadge {
  toolUseId: string | null;
  /** 'secret' and/or 'personal'. */
  kinds: Array<Finding['kind']>;
  /** The rules that matched, e.g. `anthropic`, `aws`, `email`. */
  rules: string[];
  findings: Finding[];
  moreFindings: number;
  /** One line for a tooltip: `anthropic in /memories/a.md line 2: sk-************AA (52 chars); …`. */
  summary: string;
}

function badgeOf(record: FlagRecord): FlagBadge {
  return {
    toolUseId: record.toolUseId,
    kinds: [...new Set(record.findings.map((f) => f.kind))].sort(),
    rules: [...new Set(record.findings.map((f) => f.rule))].sort(),
    findings: record.findings.slice(0, MAX_FINDINGS),
    moreFindings: Math.max(0, record.findings.length - MAX_FINDINGS),
    summary:
      record.findings.slice(0, MAX_FINDINGS).map((f) => `${f.rule} in ${f.path} line ${f.line}: ${f.masked}`).join('; ') +
      (record.findings.length > MAX_FINDINGS ? `; ${record.findings.length - MAX_FINDINGS} more` : ''),
  };
}

/** The flag of one commit, or null. */
export function flagOf(ctx: AuditContext, commit: string): FlagBadge | null {
  const record = flagOfCommit(ctx, commit);
  return record ? badgeOf(record) : null;
}

/** The flags of the commits on a page, by commit id (only flagged ones appear). */
export function flagsOf(ctx: AuditContext, commits: Iterable<string>): Record<string, FlagBadge> {
  const out: Record<string, FlagBadge> = {};
  for (const commit of commits) {
    const badge = flagOf(ctx, commit);
    if (badge) out[commit] = badge;
  }
  return out;
}

/** How many calls are flagged so far. */
export function flaggedCount(ctx: AuditContext): number {
  return flaggedCallCount(ctx);
}
