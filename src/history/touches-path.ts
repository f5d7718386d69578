import { isMemoryFile } from '../store/history-index/file-diffs';
import type { HistoryEntry } from '../store/history-index';

/**
 * Does the commit touch `virtualPath` (a `/memories/...` path) or anything below it? Shared by the CLI's
 * `log --path` and the audit UI's path filter, so both answer the same question the same way.
 */
export function touchesPath(entry: HistoryEntry, virtualPath: string): boolean {
  const prefix = virtualPath.replace(/\/+$/, '');
  const under = (p: string | undefined) => p !== undefined && (p === prefix || p.startsWith(`${prefix}/`));
  return under(entry.path) || under(entry.newPath) || entry.changes.some((c) => isMemoryFile(c.path) && under(`/${c.path}`));
}
