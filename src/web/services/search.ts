import { isMemoryFile } from '../../store/commit-diff';
import { listFiles } from '../../store/objects';
import { AuditContext, BadRequest, textOf } from './context';
import { CommitPage, listCommits, MAX_QUERY_CHARS } from './commits';
import { splitLines } from './files';

/**
 * Search the memory at HEAD (paths and lines, case-insensitive) and its history (the calls that
 * introduced the text). Both halves are bounded: a cap on files read and matches returned, and the
 * commits list's own scan bounds.
 */

const MAX_FILES_READ = 5000;
/** Bytes of file content one search reads at most (a store of many large files stays bounded). */
const MAX_BYTES_READ = 64 * 1024 * 1024;
const MAX_LINE_MATCHES = 200;
const MAX_MATCHES_PER_FILE = 20;

export interface LineMatch {
  no: number;
  text: string;
}

export interface SearchPage {
  q: string;
  files: { rel: string; pathMatch: boolean; lines: LineMatch[] }[];
  truncated: boolean;
  history: CommitPage | null;
}

export async function search(ctx: AuditContext, q: string): Promise<SearchPage> {
  if (q.length > MAX_QUERY_CHARS) throw new BadRequest(`q is longer than ${MAX_QUERY_CHARS} characters`);
  if (q === '') return { q, files: [], truncated: false, history: null };
  const head = ctx.store.history.head!;
  const files = [...(await listFiles(ctx.store.objects, await ctx.store.commitTree(head.commit)))]
    .filter(([repoPath, entry]) => isMemoryFile(repoPath) && entry.mode === '100644')
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const needle = q.toLowerCase();
  const results: SearchPage['files'] = [];
  let matches = 0;
  let bytesRead = 0;
  let truncated = files.length > MAX_FILES_READ;
  for (const [repoPath, entry] of files.slice(0, MAX_FILES_READ)) {
    const rel = repoPath.slice('memories/'.length);
    const pathMatch = rel.toLowerCase().includes(needle);
    const lines: LineMatch[] = [];
    const text = await textOf(ctx, entry.oid);
    bytesRead += text.length;
    if (text.toLowerCase().includes(needle)) {
      splitLines(text).forEach((line, k) => {
        if (lines.length < MAX_MATCHES_PER_FILE && matches < MAX_LINE_MATCHES && line.toLowerCase().includes(needle)) {
          lines.push({ no: k + 1, text: line });
          matches++;
        }
      });
    }
    if (pathMatch || lines.length) results.push({ rel, pathMatch, lines });
    if (matches >= MAX_LINE_MATCHES || bytesRead >= MAX_BYTES_READ) {
      truncated = true;
      break;
    }
  }
  const history = await listCommits(ctx, { text: q });
  return { q, files: results, truncated, history };
}
