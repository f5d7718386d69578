import { Command } from 'commander';
import { openStore, repoOption } from '../options';
import { addRollbackOptions, printOutcome, RollbackCliOptions, toRollbackOptions, writesRefused } from '../rollback-output';

export function registerRestore(program: Command): void {
  addRollbackOptions(
    program
      .command('restore')
      .summary('put a file or directory back as it was right after a call')
      .argument('<path>', 'a /memories path (a file or a directory)')
      .requiredOption('--at <ref>', 'the point to take it from: a tool_use id (right after that call), a commit, HEAD~N, or an ISO time')
      .option('--delete', 'allow deleting files that are there now but were not at that point')
      .addOption(repoOption()),
  )
    .addHelpText(
      'after',
      '\nThe path is followed back through later renames: after `rename a.md b.md`, restoring /memories/b.md\n' +
        'at a call before the rename brings back what a.md held then, as b.md. A restore that would delete a\n' +
        'file is refused unless --delete is given.\n\n' +
        'Example:\n  memgit restore /memories/b.md --at toolu_01 --dry-run',
    )
    .action(async (path: string, options: RollbackCliOptions & { at: string; delete?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      const restoreOptions = { ...toRollbackOptions(options), at: options.at, delete: options.delete === true };
      const outcome = await store.restore(path, restoreOptions).finally(() => store.close());
      process.exitCode = printOutcome(outcome, options.json, writesRefused(store));
    });
}
