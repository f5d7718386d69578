import { Command } from 'commander';
import { openStore, repoOption } from '../options';
import { addRollbackOptions, printOutcome, RollbackCliOptions, toRollbackOptions, writesRefused } from '../rollback-output';

export function registerReset(program: Command): void {
  addRollbackOptions(
    program
      .command('reset')
      .summary('one new commit whose memory equals the memory at a point in history')
      .requiredOption('--to <point>', 'a tool_use id, a commit id or prefix, HEAD~N, or an ISO time (the last commit at or before it)')
      .addOption(repoOption()),
  ).action(async (options: RollbackCliOptions & { to: string }) => {
    const store = await openStore(options.repo, { create: false });
    const outcome = await store.reset({ ...toRollbackOptions(options), to: options.to }).finally(() => store.close());
    process.exitCode = printOutcome(outcome, options.json, writesRefused(store));
  });
}
