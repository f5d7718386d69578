import { Command } from 'commander';
import { fileDiffs, unifiedDiff } from '../../store/commit-diff';
import { CommitNotFoundError } from '../../store/errors';
import { fail, openStore, repoOption } from '../options';
import { toJson } from './log';

export function registerShow(program: Command): void {
  program
    .command('show')
    .summary('show one commit: its metadata and unified diff')
    .argument('<ref>', 'a tool_use id, or a commit id (full or at least 4 hex digits)')
    .addOption(repoOption())
    .option('--json', 'metadata and per-file patches as one JSON object')
    .action(async (ref: string, options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      let entry;
      try {
        entry = await store.resolve(ref);
      } catch (error) {
        if (error instanceof CommitNotFoundError) fail(error.message.replace(/^memgit: /, ''));
        throw error;
      }
      const patches = await Promise.all(fileDiffs(entry).map((d) => unifiedDiff(store.objects, d)));
      if (options.json) {
        process.stdout.write(JSON.stringify({ ...toJson(entry), parent: entry.parent, patches }) + '\n');
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
        process.stdout.write(lines.join('\n') + '\n\n' + (patches.join('\n') || '(no change to memory files)\n'));
      }
      await store.close();
    });
}
