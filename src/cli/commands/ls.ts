import { Command } from 'commander';
import { MEMORY_ROOT } from '../../contract/paths';
import { listAt } from '../../history/memory-at';
import { historyContext } from '../../history/context';
import { memoryPath, openStore, repoOption, resolveAt } from '../options';

export function registerLs(program: Command): void {
  program
    .command('ls')
    .summary('list the memory files (below a path) as they were at a point in history')
    .argument('[path]', 'a /memories path (a directory or a file)', MEMORY_ROOT)
    .option('--at <ref>', 'a tool_use id, a commit id or prefix, HEAD~N, or an ISO time (default: HEAD)')
    .addOption(repoOption())
    .option('--json', 'one JSON object per entry: path, type, size, oid')
    .addHelpText(
      'after',
      '\nEvery file below the path with its size in bytes, and every empty directory (ending in /).\n\nExamples:\n' +
        '  memgit ls\n' +
        '  memgit ls /memories/customers --at toolu_01B2OlatoaybhHitbwJuQ5gK\n' +
        '  memgit ls --at 2026-11-26 --json',
    )
    .action(async (path: string, options: { at?: string; repo?: string; json?: boolean }) => {
      const virtual = memoryPath(path);
      const store = await openStore(options.repo, { create: false });
      try {
        const at = await resolveAt(store, options.at);
        const listing = await listAt(historyContext(store), virtual, at);
        const out = listing.map((e) =>
          options.json ? JSON.stringify(e) : e.type === 'directory' ? `${'-'.padStart(8)}  ${e.path}/` : `${String(e.size).padStart(8)}  ${e.path}`,
        );
        if (out.length) process.stdout.write(out.join('\n') + '\n');
      } finally {
        await store.close();
      }
    });
}
