import { Command } from 'commander';
import { commitPatches } from '../../history/log-query';
import { revertedBy } from '../../history/reverts';
import { CommitNotFoundError } from '../../store/errors';
import type { HistoryEntry } from '../../store/history-index';
import { fail, openStore, repoOption } from '../options';
import { toJson } from './log';

export function registerShow(program: Command): void {
  program
    .command('show')
    .summary('show one commit: its metadata and unified diff')
    .argument('<ref>', 'a tool_use id, a commit id (full or at least 4 hex digits), HEAD, HEAD~N, or an ISO time')
    .addOption(repoOption())
    .option('--json', 'metadata and per-file patches as one JSON object')
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
      let entry: HistoryEntry;
      try {
        entry = await store.resolvePoint(ref);
      } catch (error) {
        if (error instanceof CommitNotFoundError) fail(error.message.replace(/^memgit: /, ''));
        throw error;
      }
      const patches = await commitPatches(store.objects, entry);
      const undoneBy = revertedBy(store.history, entry.commit);
      if (options.json) {
        process.stdout.write(JSON.stringify({ ...toJson(entry), parent: entry.parent, reverted_by: undoneBy.map((e) => e.commit), patches }) + '\n');
      } else {
        const meta = toJson(entry);
        const lines = [`commit ${entry.commit}`];
        if (entry.parent) lines.push(`parent ${entry.parent}`);
        lines.push(`date    ${meta.time}`);
        if (meta.tool_use_id) lines.push(`tool_use ${meta.tool_use_id}`);
        else lines.push(`title   ${entry.title}`);
        if (meta.session) lines.push(`session ${meta.session}`);
        if (meta.command) lines.push(`command ${meta.command}`);
        if (meta.path) lines.push(`path    ${meta.path}`);
        if (meta.new_path) lines.push(`new path ${meta.new_path}`);
        if (meta.actor) lines.push(`actor   ${meta.actor}`);
        for (const r of meta.reverts) lines.push(`reverts ${r}`);
        if (meta.reason) lines.push(`reason  ${meta.reason}`);
        for (const undo of undoneBy) {
          const again = revertedBy(store.history, undo.commit);
          const note = again.length ? ` (itself reverted by ${again.map((e) => e.commit.slice(0, 12)).join(', ')})` : '';
          lines.push(`reverted by ${undo.commit} ${undo.title} ${new Date(undo.time * 1000).toISOString()}${note}`);
        }
        process.stdout.write(lines.join('\n') + '\n\n' + (patches.join('\n') || '(no change to memory files)\n'));
      }
      await store.close();
    });
}
