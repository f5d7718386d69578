import { isMemoryFile } from '../../store/commit-diff';
import { listFiles } from '../../store/objects';
import { AuditContext, CommitSummary, summarise } from './context';
import { flaggedCount } from './flags';
import { redactionCount } from './redaction';
import { lastChangeOf, sizeAt } from './tree';

/** The front page: the memory at HEAD, totals, and the latest calls. */

export const OVERVIEW_FILES = 300;
const LATEST = 12;

export interface Overview {
  head: CommitSummary | null;
  totals: { commits: number; sessions: number; files: number; bytes: number; flagged: number; redactions: number };
  files: { rel: string; size: number; lastChange: CommitSummary | null }[];
  filesTruncated: boolean;
  latest: CommitSummary[];
}

export async function overview(ctx: AuditContext): Promise<Overview> {
  const history = ctx.store.history;
  const head = history.head;
  if (!head) return { head: null, totals: { commits: 0, sessions: 0, files: 0, bytes: 0, flagged: 0, redactions: 0 }, files: [], filesTruncated: false, latest: [] };
  const headPosition = history.size - 1;
  const all = [...(await listFiles(ctx.store.objects, await ctx.store.commitTree(head.commit)))]
    .filter(([repoPath, entry]) => isMemoryFile(repoPath) && entry.mode === '100644')
    .sort(([a], [b]) => (a < b ? -1 : 1));
  let bytes = 0;
  const files: Overview['files'] = [];
  for (const [repoPath, entry] of all) {
    const last = lastChangeOf(ctx, repoPath, headPosition);
    const size = await sizeAt(ctx, repoPath, entry.oid, last);
    bytes += size;
    if (files.length < OVERVIEW_FILES) {
      files.push({ rel: repoPath.slice('memories/'.length), size, lastChange: last ? summarise(ctx, last) : null });
    }
  }
  const latest: CommitSummary[] = [];
  for (let p = headPosition; p >= 0 && latest.length < LATEST; p--) latest.push(summarise(ctx, history.at(p)!));
  return {
    head: summarise(ctx, head),
    totals: { commits: history.size, sessions: history.sessions().length, files: all.length, bytes, flagged: flaggedCount(ctx), redactions: await redactionCount(ctx) },
    files,
    filesTruncated: all.length > files.length,
    latest,
  };
}
