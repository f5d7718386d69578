import { MEMORY_ROOT } from '../../contract/paths';
import { queryLog } from '../../history/log';
import { fileSize, memoryFilesAt } from '../../history/memory-at';
import { historySummary } from '../../history/summary';
import { lastChangeOf } from '../../history/revisions';
import { AuditContext, CommitSummary, summarise } from './context';
import { flaggedCount } from './flags';
import { redactionCount } from './redaction';

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
  const summary = historySummary(ctx);
  const head = summary.head;
  if (!head) return { head: null, totals: { commits: 0, sessions: 0, files: 0, bytes: 0, flagged: 0, redactions: 0 }, files: [], filesTruncated: false, latest: [] };
  const all = await memoryFilesAt(ctx, head);
  let bytes = 0;
  const files: Overview['files'] = [];
  for (const file of all) {
    const last = lastChangeOf(ctx, file.path, head);
    const size = await fileSize(ctx, file.path, file.oid, last);
    bytes += size;
    if (files.length < OVERVIEW_FILES) {
      files.push({ rel: file.path.slice(MEMORY_ROOT.length + 1), size, lastChange: last ? summarise(ctx, last) : null });
    }
  }
  const latest: CommitSummary[] = (await queryLog(ctx, {}, LATEST)).map((row) => summarise(ctx, row.entry));
  return {
    head: summarise(ctx, head),
    totals: { commits: summary.commits, sessions: summary.sessions, files: all.length, bytes, flagged: flaggedCount(ctx), redactions: await redactionCount(ctx) },
    files,
    filesTruncated: all.length > files.length,
    latest,
  };
}
