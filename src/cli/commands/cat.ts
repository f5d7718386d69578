import { Command } from 'commander';
import { readFileAt } from '../../history/memory-at';
import { historyContext } from '../../history/context';
import { memoryPath, openStore, repoOption, resolveAt } from '../options';

export function registerCat(program: Command): void {
  program
    .command('cat')
    .summary('print a memory file as it was at a point in history')
    .argument('<path>', 'a /memories file path')
    .option('--at <ref>', 'a tool_use id, a commit id or prefix, HEAD~N, or an ISO time (default: HEAD)')
    .addOption(repoOption())
    .option('--json', 'one JSON object: path, commit, tool_use_id, size and content')
    .addHelpText(
      'after',
      '\nThe bytes are printed exactly as stored. A path that did not exist then (or is a directory)\n' +
        'exits 1.\n\nExamples:\n' +
        '  memgit cat /memories/customers/acme/profile.md --at toolu_01B2OlatoaybhHitbwJuQ5gK\n' +
        '  memgit cat /memories/notes.md --at 2026-11-30T09:00Z\n' +
        '  memgit cat /memories/notes.md --at HEAD~3 --json',
    )
    .action(async (path: string, options: { at?: string; repo?: string; json?: boolean }) => {
      const virtual = memoryPath(path);
      const store = await openStore(options.repo, { create: false });
      try {
        const at = await resolveAt(store, options.at);
        const file = await readFileAt(historyContext(store), virtual, at);
        if (options.json) {
          process.stdout.write(JSON.stringify({ path: virtual, commit: at.commit, toolUseId: at.toolUseId ?? null, size: file.size, content: file.text }) + '\n');
        } else {
          process.stdout.write(file.text);
        }
      } finally {
        await store.close();
      }
    });
}
