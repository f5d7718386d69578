import { Command } from 'commander';
import { isValidId } from '../contract/paths';
import { ReadOnlyStoreError, type RollbackOptions, type RollbackOutcome } from '../store';
import { EXIT_ERROR } from './options';

/** What the four rollback commands share: their options and how an outcome is printed. */

export interface RollbackCliOptions {
  repo?: string;
  dryRun?: boolean;
  reason?: string;
  operator?: string;
  json?: boolean;
}

/** Exit code of a rollback refused because later calls changed the same lines or paths. */
export const CONFLICT_EXIT_CODE = 2;

export function addRollbackOptions(command: Command): Command {
  return command
    .option('--dry-run', 'print the exact diff the commit would make, and write nothing')
    .option('--reason <text>', 'why, recorded as the Memory-Reason trailer (one line)')
    .option('--operator <name>', 'who, recorded as Memory-Actor: operator:<name> (default: $USER or "cli")')
    .option('--json', 'print the outcome as one JSON object')
    .addHelpText(
      'after',
      '\nNothing is rewritten: the result is one new commit on top of HEAD. When later calls changed the\n' +
        `same lines or paths, nothing is written, the conflicts are listed and the exit code is ${CONFLICT_EXIT_CODE}.`,
    );
}

/** Why a rollback could not be applied to this store, or null when it could (see printOutcome). */
export function writesRefused(store: { readOnly: boolean }): string | null {
  return store.readOnly ? new ReadOnlyStoreError().detail : null;
}

export function defaultOperator(): string {
  const user = process.env.USER;
  return user && isValidId(user) ? user : 'cli';
}

export function toRollbackOptions(options: RollbackCliOptions): RollbackOptions {
  return { operator: options.operator ?? defaultOperator(), reason: options.reason, dryRun: options.dryRun };
}

/**
 * Print an outcome; returns the exit code. `refused`: why the previewed change could not be applied to
 * this store (a read-only clone): the preview is shown as what it would be elsewhere, never as what
 * would be committed here, and the exit code is EXIT_ERROR.
 */
export function printOutcome(outcome: RollbackOutcome, json: boolean | undefined, refused: string | null = null): number {
  const notApplicable = refused !== null && outcome.status === 'preview';
  const code = outcome.status === 'conflict' ? CONFLICT_EXIT_CODE : notApplicable ? EXIT_ERROR : 0;
  if (json) {
    process.stdout.write(JSON.stringify(notApplicable ? { ...outcome, applicable: false, refused } : outcome) + '\n');
    return code;
  }
  if (notApplicable) {
    process.stderr.write(`memgit: dry run: "${outcome.title}" could not be applied: ${refused}\n`);
    process.stdout.write(`on a writable copy of ${outcome.head.slice(0, 12)} it would change:\n${summary(outcome)}\n${outcome.patch}`);
    return code;
  }
  switch (outcome.status) {
    case 'committed':
      process.stdout.write(`[${outcome.commit!.slice(0, 12)}] ${outcome.title}\n${summary(outcome)}\n${outcome.patch}`);
      break;
    case 'preview':
      process.stdout.write(`dry run: would commit "${outcome.title}" on ${outcome.head.slice(0, 12)}\n${summary(outcome)}\n${outcome.patch}`);
      break;
    case 'unchanged':
      process.stderr.write(`memgit: ${outcome.title}: nothing to change; the memory already looks like that\n`);
      break;
    case 'conflict':
      process.stderr.write(formatConflicts(outcome));
      break;
    case 'stopped': // only with a budget (the audit UI's previews); the CLI plans without one
      process.stderr.write(`memgit: ${outcome.title}: the preview stopped (${outcome.stopped?.reason} budget) after ${outcome.stopped?.planned} of ${outcome.stopped?.of} calls; nothing was written\n`);
      break;
  }
  return code;
}

function summary(outcome: RollbackOutcome): string {
  const lines = [`actor   ${outcome.actor}`];
  if (outcome.reason) lines.push(`reason  ${outcome.reason}`);
  for (const r of outcome.reverts.slice(0, 20)) lines.push(`reverts ${r}`);
  if (outcome.reverts.length > 20) lines.push(`reverts … ${outcome.reverts.length - 20} more`);
  return lines.join('\n') + '\n';
}

export function formatConflicts(outcome: RollbackOutcome): string {
  const lines = [`memgit: conflict: ${outcome.title} would undo changes that later calls built on; nothing was written`];
  for (const c of outcome.conflicts) {
    lines.push(`  ${c.path}: ${c.message}`);
    for (const call of c.calls) {
      const where = call.lines.length ? `, wrote lines ${call.lines.map((l) => (l.from === l.to ? `${l.from}` : `${l.from}-${l.to}`)).join(', ')}` : '';
      lines.push(`    by ${call.toolUseId ?? call.title} (commit ${call.commit.slice(0, 12)}${call.session ? `, session ${call.session}` : ''}${where})`);
    }
  }
  return lines.join('\n') + '\n';
}
