import { Command } from 'commander';
import { historyContext } from '../../history/context';
import { listSessions } from '../../history/sessions';
import { openStore, repoOption } from '../options';

export function registerSessions(program: Command): void {
  program
    .command('sessions')
    .summary('list the sessions of the store: when, how many commits, writes, reverted calls, reads and failed calls')
    .addOption(repoOption())
    .option('--json', 'one session record per line (schema memgit.session/1, see docs/records.md): id, calls (its commits), first, last (ISO), files, writes, reverted, reads, failed, logOnly')
    .addHelpText(
      'after',
      '\nMost recently active first. "commits" counts the commits a session made (its successful writes;\n' +
        '`calls` in --json), "writes" those that changed a memory file, "reverted" calls an operator undid\n' +
        'later (revert, restore, rollback-session, reset); "reads" and "failed" come from the call log.\n' +
        'A session that made no commit (it only read, or all its calls failed) is known from the call log\n' +
        'alone and marked "(no commits: call log only)", with its first and last logged call as its times.\n\nExamples:\n' +
        '  memgit sessions\n' +
        '  memgit sessions --json | jq -r \'select(.reverted > 0) | .id\'',
    )
    .action(async (options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      try {
        await store.refreshHead();
        // The documented records, as GET /api/sessions and the UI's list have them; the text is their columns.
        const iso = (time: string) => time.replace('.000Z', 'Z');
        const out = (await listSessions(historyContext(store))).map((s) =>
          options.json
            ? JSON.stringify(s)
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
