import { Command, Option } from 'commander';
import { historyContext } from '../../history/context';
import { flaggedCalls } from '../../history/flags';
import { openStore, repoOption } from '../options';

export function registerFlags(program: Command): void {
  program
    .command('flags')
    .summary('calls flagged for writing likely secrets or personal data')
    .description(
      'List the calls whose writing added a likely secret (secretlint\'s recommended rules: Anthropic, OpenAI,\n' +
        'AWS, GCP, GitHub, Slack, npm, private keys, ...) or, where the store opts in, personal data (e-mail,\n' +
        'phone, IBAN, card numbers passing Luhn). Values are masked. The agent is never told; erase with\n' +
        '`memgit redact`.\n\nExamples:\n  memgit flags\n  memgit flags --personal-data on\n  memgit flags --json',
    )
    .addOption(repoOption())
    .addOption(new Option('--personal-data <on|off>', 'flag personal data in this store from now on (and rescan)').choices(['on', 'off']))
    .option('--json', 'one JSON object per flagged call')
    .action(async (options: { repo?: string; personalData?: 'on' | 'off'; json?: boolean }) => {
      if (options.personalData) {
        const probe = await openStore(options.repo, { create: false, replicate: false, flags: false });
        await probe.setPersonalDataFlagging(options.personalData === 'on');
        await probe.close();
      }
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        // complete: waits for the scan of what was not scanned yet
        for (const record of await flaggedCalls(historyContext(store), { complete: true })) {
          if (options.json) {
            process.stdout.write(`${JSON.stringify(record)}\n`);
            continue;
          }
          const when = new Date(record.time * 1000).toISOString().replace('.000Z', 'Z');
          process.stdout.write(`${record.commit.slice(0, 12)}  ${when}  ${record.session ?? '-'}  ${record.toolUseId ?? '(operator)'}\n`);
          for (const f of record.findings) process.stdout.write(`    ${f.kind} ${f.rule}  ${f.path}:${f.line}  ${f.masked}\n`);
        }
      } finally {
        await store.close();
      }
    });
}
