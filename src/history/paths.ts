/**
 * Paths as the read model takes them: virtual paths (`/memories/a.md`, as the memory tool names files) in
 * every question and answer; repository paths (`memories/a.md`) only inside, where the index keys by them.
 */
import { MEMORY_REPO_ROOT, MEMORY_ROOT } from '../contract/paths';

export { MEMORY_REPO_ROOT, MEMORY_ROOT } from '../contract/paths';
export { repoPathToVirtual, toRepoPath } from '../store';

/** `/memories/a`, `memories/a`, `a` and `/a` all mean the memory path /memories/a (the UI's path box). */
export function toVirtualPrefix(p: string): string {
  const trimmed = p.trim().replace(/\/+$/, '');
  if (trimmed === '' || trimmed === MEMORY_ROOT || trimmed === MEMORY_REPO_ROOT) return MEMORY_ROOT;
  if (trimmed.startsWith(`${MEMORY_ROOT}/`)) return trimmed;
  if (trimmed.startsWith(`${MEMORY_REPO_ROOT}/`)) return `/${trimmed}`;
  return `${MEMORY_ROOT}/${trimmed.replace(/^\/+/, '')}`;
}
