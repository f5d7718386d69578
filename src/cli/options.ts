import * as path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { MemoryStore, StoreOptions } from '../store/memory-store';

/** Options shared by every command that opens a store, registered in one place. */

export const DEFAULT_REPO = 'memories-repo';

export function repoOption(): Option {
  return new Option('--repo <dir>', 'the store (a git repository); env MEMGIT_REPO').default(
    undefined,
    `$MEMGIT_REPO or ./${DEFAULT_REPO}`,
  );
}

export function resolveRepo(repo: string | undefined): string {
  return path.resolve(repo ?? process.env.MEMGIT_REPO ?? DEFAULT_REPO);
}

export async function openStore(repo: string | undefined, options: StoreOptions = {}): Promise<MemoryStore> {
  return MemoryStore.open(resolveRepo(repo), options);
}

/** Print a clear one-line error and exit non-zero, for errors a user can act on. */
export function fail(message: string, code = 1): never {
  process.stderr.write(`memgit: ${message}\n`);
  process.exit(code);
}

/** An option parser for a positive integer; commander reports a bad value as a usage error. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a positive integer');
  }
  return n;
}

export type CommandRegistrar = (program: Command) => void;
