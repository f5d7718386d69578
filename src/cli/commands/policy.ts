import { Command, Option } from 'commander';
import { REVIEW_MODES, type PolicyRecord } from '../../store';
import { logField } from '../../terminal/escape';
import { openStore, repoOption } from '../options';

function describe(record: PolicyRecord): string {
  const { policy, audit } = record;
  const lines = [`review: ${policy.review}`, `secrets hold: ${policy.secretsHold ? 'yes' : 'no'}`, `personal data reported: ${policy.personalData ? 'yes' : 'no'}`];
  if (audit.length) {
    lines.push('', 'changes:');
    for (const c of audit) {
      lines.push(`  ${c.time}  ${logField(c.operator, 60)}  ${c.from.review} -> ${c.to.review}${c.reason ? `  ${logField(c.reason)}` : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function registerPolicy(program: Command): void {
  program
    .command('policy')
    .summary("show or set the store's review policy (review before trust)")
    .description(
      'Whether agent writes wait for an operator before they become memory (docs/review.md): off (every\n' +
        'write lands on main, the default), flagged (a write the detectors hold waits on its session\'s review\n' +
        'branch), all (every write waits). Every change is recorded: who, when, why, old -> new.\n\n' +
        'Examples:\n  memgit policy\n  memgit policy --review flagged --operator dana --reason "tickets are untrusted"\n  memgit policy --json',
    )
    .addOption(repoOption())
    .addOption(new Option('--review <policy>', 'set the policy').choices([...REVIEW_MODES]))
    .addOption(new Option('--secrets-hold <on|off>', 'a likely secret holds a write on its own (default on)').choices(['on', 'off']))
    .addOption(new Option('--personal-data <on|off>', 'report personal data among the findings (never holds alone)').choices(['on', 'off']))
    .option('--operator <name>', 'who (recorded)', process.env.USER ?? 'operator')
    .option('--reason <text>', 'why (recorded)')
    .option('--json', 'print the policy and its changes as JSON')
    .action(async (options: { repo?: string; review?: string; secretsHold?: 'on' | 'off'; personalData?: 'on' | 'off'; operator?: string; reason?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false, flags: false });
      try {
        let record = store.reviewPolicy();
        if (options.review !== undefined || options.secretsHold !== undefined || options.personalData !== undefined) {
          ({ record } = await store.setReviewPolicy({
            review: options.review,
            secretsHold: options.secretsHold === undefined ? undefined : options.secretsHold === 'on',
            personalData: options.personalData === undefined ? undefined : options.personalData === 'on',
            operator: options.operator,
            reason: options.reason,
          }));
        }
        process.stdout.write(options.json ? `${JSON.stringify(record)}\n` : describe(record));
      } finally {
        await store.close();
      }
    });
}
