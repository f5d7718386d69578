import { Command } from 'commander';
import { errorMessage } from '../../contract/format';
import { commitFiles, commitPatches, revertedByOf, rewrittenFrom } from '../../history/commit';
import { historyContext } from '../../history/context';
import { AmbiguousRefError, CommitNotFoundError, oneLine } from '../../store';
import { callsOf } from '../../history/calls';
import { CallRecord } from '../../history/records';
import type { HistoryEntry } from '../../history/entry';
import { pointAt } from '../../history/points';
import { fail, openStore, repoOption } from '../options';
import { commitRecord, FileChangeRecord } from '../../history/records';

export function registerShow(program: Command): void {
  program
    .command('show')
    .summary('show one commit: its metadata and unified diff')
    .argument('<ref>', 'a tool_use id, a commit id (full or at least 4 hex digits), HEAD, HEAD~N, or an ISO time; also a view or a failed call')
    .addOption(repoOption())
    .option('--json', 'the commit record (docs/records.md) with revertedBy and per-file patches, as one JSON object')
    .addHelpText(
      'after',
      '\nA call that was undone later says which commit reverted it ("reverted by"), and whether that revert\n' +
        'was itself reverted (the call re-applied).\n\nExamples:\n' +
        '  memgit show toolu_01B2OlatoaybhHitbwJuQ5gK\n' +
        '  memgit show HEAD~1 --json\n' +
        '  memgit show 2026-11-30T10:00Z          # the commit in effect at that time',
    )
    .action(async (ref: string, options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      const ctx = historyContext(store);
      let entry: HistoryEntry;
      try {
        entry = await pointAt(ctx, ref);
      } catch (error) {
        if (!(error instanceof CommitNotFoundError) || error instanceof AmbiguousRefError) throw error;
        // A read or a failed call makes no commit, but it is on the record: the call log.
        const calls = await callsOf(store, ref);
        await store.close();
        if (calls.length === 0) fail(error.detail);
        const out = calls.map((call) => (options.json ? JSON.stringify(call) + '\n' : describeCall(call)));
        process.stdout.write(out.join(options.json ? '' : '\n'));
        return;
      }
      const diffs = commitFiles(entry);
      const patches = await commitPatches(ctx, entry);
      const undoneBy = revertedByOf(ctx, entry.commit);
      // An id from before a redaction resolves to the commit that replaced it: said, as the UI says it.
      const moved = await rewrittenFrom(ctx, ref, entry.commit);
      if (options.json) {
        const files: FileChangeRecord[] = diffs.map((d, i) => ({ status: d.status, oldPath: d.oldPath, newPath: d.newPath, patch: patches[i] }));
        process.stdout.write(JSON.stringify({ ...commitRecord(entry), revertedBy: undoneBy.map((e) => e.commit), rewrittenFrom: moved, files }) + '\n');
      } else {
        if (moved) {
          process.stderr.write(
            `memgit: note: ${moved.old} is an id from before redaction ${moved.redaction}, which rewrote this commit; ` +
              `it is now ${entry.commit} (memgit redactions lists the redactions)\n`,
          );
        }
        const meta = commitRecord(entry);
        const lines = [`commit ${entry.commit}`];
        if (entry.parent) lines.push(`parent ${entry.parent}`);
        lines.push(`date    ${meta.time}`);
        if (meta.toolUseId) lines.push(`tool_use ${meta.toolUseId}`);
        else lines.push(`title   ${entry.title}`);
        if (meta.session) lines.push(`session ${meta.session}`);
        if (meta.command) lines.push(`command ${meta.command}`);
        if (meta.path) lines.push(`path    ${meta.path}`);
        if (meta.newPath) lines.push(`new path ${meta.newPath}`);
        if (!meta.command && meta.paths.length) lines.push(`paths   ${meta.paths.join(' ')}`);
        if (meta.actor) lines.push(`actor   ${meta.actor}`);
        for (const r of meta.reverts) lines.push(`reverts ${r}`);
        if (meta.reason) lines.push(`reason  ${meta.reason}`);
        for (const undo of undoneBy) {
          const again = revertedByOf(ctx, undo.commit);
          const note = again.length ? ` (itself reverted by ${again.map((e) => e.commit.slice(0, 12)).join(', ')})` : '';
          lines.push(`reverted by ${undo.commit} ${undo.title} ${new Date(undo.time * 1000).toISOString()}${note}`);
        }
        process.stdout.write(lines.join('\n') + '\n\n' + (patches.join('\n') || '(no change to memory files)\n'));
      }
      await store.close();
    });
}

/** A call that made no commit (a read, a failure), from the call log. */
export function describeCall(call: CallRecord): string {
  const lines = [
    `call    ${oneLine(call.id)} (${call.kind === 'read' ? 'read: no commit' : call.kind === 'failed' ? 'FAILED: no commit' : `write, commit ${call.commit}`})`,
    `session ${oneLine(call.session)}`,
    `date    ${call.time}`,
  ];
  if (call.command !== null) lines.push(`command ${oneLine(call.command)}`);
  for (const p of call.paths) lines.push(`path    ${oneLine(p, 1024)}`);
  if (call.readAt) lines.push(`read at ${call.readAt}`);
  lines.push(call.ok ? 'result  ok' : `result  error: ${oneLine(errorMessage(call.error ?? ''), 4096)}`);
  return lines.join('\n') + '\n';
}
