import { Command } from 'commander';
import { openStore, repoOption } from '../options';
import { addRollbackOptions, printOutcome, RollbackCliOptions, toRollbackOptions, writesRefused } from '../rollback-output';

export function registerRollbackSession(program: Command): void {
  addRollbackOptions(
    program
      .command('rollback-session')
      .summary('undo every call of a session, newest first, as one commit')
      .argument('<session>', 'a session id')
      .addOption(repoOption()),
  ).action(async (session: string, options: RollbackCliOptions) => {
    const store = await openStore(options.repo, { create: false });
    const outcome = await store.rollbackSession(session, toRollbackOptions(options)).finally(() => store.close());
    process.exitCode = printOutcome(outcome, options.json, writesRefused(store));
  });
}
