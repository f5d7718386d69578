import { Command } from 'commander';
import { sessionStats } from '../../history/sessions';
import { openStore, repoOption } from '../options';

export function registerSessions(program: Command): void {
  program
    .command('sessions')
    .summary('list the sessions of the store: when, how many commits, writes, reverted calls, reads and failed calls')
    .addOption(repoOption())
    .option('--json', 'one JSON object per session: session, first, last (ISO), calls (its commits, as in the documented session record), writes, reverted, reads, failed, logOnly')
    .addHelpText(
      'after',
      '\nMost recently active first. "commits" counts the commits a session made (its successful writes;\n' +
        '`calls` in --json), "writes" those that changed a memory file, "reverted" calls an operator undid\n' +
        'later (revert, restore, rollback-session, reset); "reads" and "failed" come from the call log.\n' +
        'A session that made no commit (it only read, or all its calls failed) is known from the call log\n' +
        'alone and marked "(no commits: call log only)", with its first and last logged call as its times.\n\nExamples:\n' +
        '  memgit sessions\n' +
        '  memgit sessions --json | jq -r \'select(.reverted > 0) | .session\'',
    )
    .action(async (options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      try {
        await store.refreshHead();
        const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
        const out = sessionStats(store.history, await store.callLog.read()).map((s) =>
          options.json
            ? JSON.stringify({ session: s.id, first: iso(s.first), last: iso(s.last), calls: s.calls, writes: s.writes, reverted: s.reverted, reads: s.reads, failed: s.failed, logOnly: s.logOnly })
            : `${s.id}  ${iso(s.first)}  ${iso(s.last)}  commits ${s.calls}  writes ${s.writes}  reverted ${s.reverted}  reads ${s.reads}  failed ${s.failed}` +
              (s.logOnly ? '  (no commits: call log only)' : ''),
        );
        if (out.length) process.stdout.write(out.join('\n') + '\n');
        else if (!options.json) process.stderr.write('memgit: no sessions yet\n');
      } finally {
        await store.close();
      }
    });
}
