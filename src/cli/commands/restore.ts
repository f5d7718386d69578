import { Command } from 'commander';
import { openStore, repoOption } from '../options';
import { addRollbackOptions, printOutcome, RollbackCliOptions, toRollbackOptions } from '../rollback-output';

export function registerRestore(program: Command): void {
  addRollbackOptions(
    program
      .command('restore')
      .summary('put a file or directory back as it was right after a call')
      .argument('<path>', 'a /memories path (a file or a directory)')
      .requiredOption('--at <ref>', 'the point to take it from: a tool_use id (right after that call), a commit, HEAD~N, or an ISO time')
      .addOption(repoOption()),
  ).action(async (path: string, options: RollbackCliOptions & { at: string }) => {
    const store = await openStore(options.repo, { create: false });
    const outcome = await store.restore(path, { ...toRollbackOptions(options), at: options.at }).finally(() => store.close());
    process.exitCode = printOutcome(outcome, options.json);
  });
}
