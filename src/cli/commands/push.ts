import * as fs from 'node:fs';
import { Command } from 'commander';
import { errorDetail, getRemote, listRemotes, pushToRemote } from '../../store';
import { fail, openStore, printError, repoOption } from '../options';

export function registerPush(program: Command): void {
  program
    .command('push [remote]')
    .summary('push the store to its remote(s) now')
    .description(
      'Push the store\'s history to one remote, or to every remote when none is named. A remote whose\n' +
        'branch holds commits this store does not know is never overwritten: the push is refused and\n' +
        'replication to it stops until an operator decides (--force with a --reason, logged).\n\n' +
        'Examples:\n  memgit push\n  memgit push backup --json',
    )
    .addOption(repoOption())
    .option('--force', 'overwrite the remote branch (for history that was meant to be rewritten); needs --reason')
    .option('--reason <text>', 'why a force push is right (logged)')
    .option('--json', 'one JSON object per remote')
    .action(async (name: string | undefined, options: { repo?: string; force?: boolean; reason?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      let failed = false;
      try {
        const args = { fs, gitdir: store.gitdir };
        const remotes = name ? [await getRemote(args, name)] : await listRemotes(args);
        if (remotes.length === 0) fail('this store has no remotes (memgit remote add NAME URL)', 2);
        for (const remote of remotes) {
          try {
            const report = await pushToRemote(store.replication(), remote, { force: options.force, reason: options.reason });
            process.stdout.write(
              options.json
                ? `${JSON.stringify({ remote: report.remote, ok: true, head: report.head, commits: report.commits, forced: report.forced, headProblem: report.headProblem })}\n`
                : report.commits === 0
                  ? `${report.remote}: up to date at ${report.head.slice(0, 12)}\n`
                  : `${report.remote}: pushed ${report.commits} commit(s), now at ${report.head.slice(0, 12)}${report.forced ? ' (forced)' : ''}\n`,
            );
            if (report.headProblem) process.stderr.write(`memgit: warning: ${report.remote}: ${report.headProblem}\n`);
          } catch (error) {
            failed = true;
            const message = errorDetail(error);
            if (options.json) process.stdout.write(`${JSON.stringify({ remote: remote.name, ok: false, error: message })}\n`);
            else printError(message);
          }
        }
      } finally {
        await store.close();
      }
      if (failed) process.exitCode = 1;
    });
}
