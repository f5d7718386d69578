import { Command } from 'commander';
import { openStore, repoOption } from '../options';
import { addRollbackOptions, printOutcome, RollbackCliOptions, toRollbackOptions, writesRefused } from '../rollback-output';

export function registerRevert(program: Command): void {
  addRollbackOptions(
    program
      .command('revert')
      .summary('undo one tool call with a new commit; later calls on other lines stay')
      .argument('<ref>', 'a tool_use id, a commit id (full or at least 4 hex digits), HEAD, HEAD~N, or an ISO time')
      .addOption(repoOption()),
  ).action(async (ref: string, options: RollbackCliOptions) => {
    const store = await openStore(options.repo, { create: false });
    const outcome = await store.revert(ref, toRollbackOptions(options)).finally(() => store.close());
    process.exitCode = printOutcome(outcome, options.json, writesRefused(store));
  });
}
