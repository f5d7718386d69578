/**
 * Paths as the read model takes them: virtual paths (`/memories/a.md`, as the memory tool names files) in
 * every question and answer; repository paths (`memories/a.md`) only inside, where the index keys by them.
 */
export { MEMORY_ROOT as MEMORY_REPO_ROOT, repoPathToVirtual, toRepoPath } from '../store/git-reader';

/** `/memories/a`, `memories/a`, `a` and `/a` all mean the memory path /memories/a (the UI's path box). */
export function toVirtualPrefix(p: string): string {
  const trimmed = p.trim().replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '/memories' || trimmed === 'memories') return '/memories';
  if (trimmed.startsWith('/memories/')) return trimmed;
  if (trimmed.startsWith('memories/')) return `/${trimmed}`;
  return `/memories/${trimmed.replace(/^\/+/, '')}`;
}
