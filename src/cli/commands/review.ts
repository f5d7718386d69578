import { Command } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { ReviewRefusedError, type ReviewCallDetail, type ReviewDetail, type ReviewSummary } from '../../store';
import { forTerminal, logField } from '../../terminal/escape';
import { EXIT_CONFLICT, printError, repoOption, withStore } from '../options';

function when(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

function summaryLine(r: ReviewSummary): string {
  const decided = r.decision ? `  by ${logField(r.decision.operator ?? '-', 60)} ${when(r.decision.time)}${r.decision.reason ? `: ${logField(r.decision.reason)}` : ''}` : '';
  return `${r.id}  ${r.state.padEnd(8)}  ${logField(r.session, 60)}  ${r.calls.length} call(s)${r.calls[0] ? `  since ${when(r.calls[0].time)}` : ''}${decided}\n`;
}

function callText(call: ReviewCallDetail): string {
  const out: string[] = [];
  const where = call.newPath ? `${call.path} -> ${call.newPath}` : (call.path ?? '');
  const state = call.applies === null ? (call.approvedAs ? `approved as ${call.approvedAs.slice(0, 12)}` : call.approvedAs === null ? 'not approved' : '') : call.applies ? 'applies to main' : 'CONFLICTS with main now';
  out.push(`${logField(call.toolUseId, 80)}  ${call.command ?? '-'} ${logField(where)}  ${when(call.time)}  ${call.commit.slice(0, 12)}  ${state}`);
  out.push(`  detectors: ${call.detection.verdict} (score ${call.detection.score})`);
  for (const f of call.detection.findings) {
    out.push(`    ${f.strength} ${f.kind} ${f.rule}  ${logField(f.path)}${f.line !== null ? `:${f.line}` : ''}  ${logField(f.reason)}`);
    if (f.sample) out.push(`      ${logField(f.sample)}`);
  }
  for (const file of call.files) {
    const patch = createTwoFilesPatch(file.path, file.path, file.before ?? '', file.after ?? '', '', '', { context: 2 });
    out.push(forTerminal(patch.split('\n').slice(2).map((l) => `  ${l}`).join('\n').trimEnd()));
  }
  return `${out.join('\n')}\n`;
}

function detailText(r: ReviewDetail): string {
  const head = summaryLine({ ...r, calls: r.calls });
  const refs = `  fork ${r.fork.slice(0, 12)}  ${r.branch ?? r.archive ?? ''}\n`;
  return `${head}${refs}\n${r.calls.map(callText).join('\n')}`;
}

/** A refused approval: its conflicts, then exit 2 (nothing was written). */
function refused(error: unknown, json: boolean | undefined): void {
  if (!(error instanceof ReviewRefusedError)) throw error;
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.detail, conflicts: error.conflicts } })}\n`);
  printError(forTerminal(error.message));
  for (const c of error.conflicts) process.stderr.write(`  ${logField(c.toolUseId, 80)} (${c.commit.slice(0, 12)}): ${c.paths.map((p) => logField(p)).join(', ')}\n`);
  process.exitCode = EXIT_CONFLICT;
}

export function registerReview(program: Command): void {
  const review = program
    .command('review')
    .summary('writes held for review: list, show, approve, reject')
    .description(
      'Writes a store\'s review policy held (memgit policy) wait on their session\'s branch\n' +
        'refs/heads/review/<session> until an operator approves or rejects them (docs/review.md). Approving\n' +
        'replays each call onto main as its own commit (subject: its tool_use id), all or nothing; rejecting\n' +
        'keeps the calls only in the archive refs/memgit/reviews/<id>.\n\n' +
        'Examples:\n  memgit review list\n  memgit review show rv_0123456789abcdef\n' +
        '  memgit review approve rv_0123456789abcdef --operator dana --reason "checked with the customer"\n' +
        '  memgit review approve rv_0123456789abcdef --calls toolu_01A,toolu_01C\n' +
        '  memgit review reject rv_0123456789abcdef --reason "planted by a ticket"',
    );

  review
    .command('list')
    .description('every review: pending first (oldest first), then decided (newest first)')
    .addOption(repoOption())
    .option('--pending', 'only the pending ones')
    .option('--json', 'one JSON object per review')
    .action(async (options: { repo?: string; pending?: boolean; json?: boolean }) => {
      await withStore(options.repo, async (store) => {
        const reviews = (await store.reviews()).filter((r) => !options.pending || r.state === 'pending');
        for (const r of reviews) process.stdout.write(options.json ? `${JSON.stringify(r)}\n` : summaryLine(r));
      });
    });

  review
    .command('show')
    .description('one review: each call with its diff, the detectors\' findings and whether it still applies to main')
    .argument('<id>', 'the review id (rv_...)')
    .addOption(repoOption())
    .option('--json', 'the review as JSON')
    .action(async (id: string, options: { repo?: string; json?: boolean }) => {
      await withStore(options.repo, async (store) => {
        const detail = await store.review(id);
        process.stdout.write(options.json ? `${JSON.stringify(detail)}\n` : detailText(detail));
      });
    });

  review
    .command('approve')
    .description('replay the review\'s calls (or --calls) onto main, one commit each, all or nothing; then archive it')
    .argument('<id>', 'the review id (rv_...)')
    .addOption(repoOption())
    .option('--calls <ids>', 'approve only these calls (comma-separated tool_use ids); the others are rejected with the review')
    .option('--operator <name>', 'who (recorded as Memory-Approved-By)', process.env.USER ?? 'operator')
    .option('--reason <text>', 'why (recorded)')
    .option('--json', 'print the outcome as JSON')
    .action(async (id: string, options: { repo?: string; calls?: string; operator?: string; reason?: string; json?: boolean }) => {
      await withStore(options.repo, async (store) => {
        const calls = options.calls === undefined ? undefined : options.calls.split(',').map((c) => c.trim()).filter((c) => c !== '');
        try {
          const outcome = await store.approveReview(id, { operator: options.operator, reason: options.reason, calls });
          if (options.json) process.stdout.write(`${JSON.stringify(outcome)}\n`);
          else {
            process.stdout.write(`approved ${outcome.review.id}: ${outcome.commits.length} call(s) on main\n`);
            for (const [i, c] of outcome.review.calls.filter((call) => call.approvedAs).entries()) process.stdout.write(`  ${outcome.commits[i].slice(0, 12)}  ${logField(c.toolUseId, 80)}\n`);
          }
        } catch (error) {
          refused(error, options.json);
        }
      });
    });

  review
    .command('reject')
    .description('keep the review\'s calls off main: archive the branch on refs/memgit/reviews/<id> and remove it')
    .argument('<id>', 'the review id (rv_...)')
    .addOption(repoOption())
    .option('--operator <name>', 'who (recorded)', process.env.USER ?? 'operator')
    .option('--reason <text>', 'why (recorded)')
    .option('--json', 'print the outcome as JSON')
    .action(async (id: string, options: { repo?: string; operator?: string; reason?: string; json?: boolean }) => {
      await withStore(options.repo, async (store) => {
        try {
          const r = await store.rejectReview(id, { operator: options.operator, reason: options.reason });
          process.stdout.write(options.json ? `${JSON.stringify(r)}\n` : `rejected ${r.id}: ${r.calls.length} call(s) kept only in ${r.archive}\n`);
        } catch (error) {
          refused(error, options.json);
        }
      });
    });
}
