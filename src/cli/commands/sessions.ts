import { Command } from 'commander';
import { sessionStats } from '../../history/sessions';
import { openStore, repoOption } from '../options';

export function registerSessions(program: Command): void {
  program
    .command('sessions')
    .summary('list the sessions that wrote to the store: when, how many calls and writes, how many reverted')
    .addOption(repoOption())
    .option('--json', 'one JSON object per session: session, first, last (ISO), calls, writes, reverted')
    .addHelpText(
      'after',
      '\nMost recently active first. "reverted" counts calls an operator undid later (revert, restore,\n' +
        'rollback-session, reset).\n\nExamples:\n' +
        '  memgit sessions\n' +
        '  memgit sessions --json | jq -r \'select(.reverted > 0) | .session\'',
    )
    .action(async (options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      try {
        await store.refreshHead();
        const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
        const out = sessionStats(store.history).map((s) =>
          options.json
            ? JSON.stringify({ session: s.id, first: iso(s.first), last: iso(s.last), calls: s.calls, writes: s.writes, reverted: s.reverted })
            : `${s.id}  ${iso(s.first)}  ${iso(s.last)}  calls ${s.calls}  writes ${s.writes}  reverted ${s.reverted}`,
        );
        if (out.length) process.stdout.write(out.join('\n') + '\n');
        else if (!options.json) process.stderr.write('memgit: no sessions yet\n');
      } finally {
        await store.close();
      }
    });
}
