/** Checks shared by the mutating commands. */
import { ancestorsOf, utf8ByteLength } from '../paths';
import type { ContractOptions, MemoryReader, RelPath } from '../types';

/** The shallowest ancestor of `rel` that is a file (so `rel` cannot be created), or null. */
export async function findFileAncestor(reader: MemoryReader, rel: RelPath): Promise<RelPath | null> {
  for (const ancestor of ancestorsOf(rel)) {
    const kind = await reader.kind(ancestor);
    if (kind === 'file') return ancestor;
    // Below a missing directory nothing can exist, let alone a file.
    if (kind === null) return null;
  }
  return null;
}

/** The limit error for a file that would hold `content`, or null when it fits. */
export function fileSizeLimitError(path: string, content: string, options: ContractOptions): string | null {
  const bytes = utf8ByteLength(content);
  if (bytes <= options.maxFileBytes) return null;
  return `Error: File ${path} would be ${bytes} bytes; the limit for one memory file is ${options.maxFileBytes} bytes`;
}
