import { Command } from 'commander';
import { MEMORY_ROOT } from '../../contract/paths';
import { compareMemory } from '../../history/compare';
import { memoryPath, openStore, repoOption, resolveAt, usage } from '../options';

export function registerDiff(program: Command): void {
  program
    .command('diff')
    .summary('compare the memory at two points in history (unified diff)')
    .argument('<ref>', 'the older point: a tool_use id, a commit id or prefix, HEAD~N, or an ISO time')
    .argument('[ref-or-path...]', 'the newer point (default HEAD), then optionally a /memories path to limit to')
    .addOption(repoOption())
    .option('--stat', 'lines added and removed per file instead of the diff')
    .option('--name-status', 'one line per file: A, D, M or R, and the path(s)')
    .option('--json', 'one JSON object: from, to, path and the files with status, counts and patch')
    .addHelpText(
      'after',
      '\nWith one point, compares it with HEAD. Renames (the same bytes at exactly one new path) are paired.\n\nExamples:\n' +
        '  memgit diff HEAD~5                                          # the last five commits together\n' +
        '  memgit diff 2026-11-26 2026-11-30 /memories/customers      # what changed below a path between two days\n' +
        '  memgit diff toolu_01 toolu_09 --stat',
    )
    .action(async (first: string, rest: string[], options: { repo?: string; stat?: boolean; nameStatus?: boolean; json?: boolean }) => {
      const refs = [first, ...rest.filter((a) => !a.startsWith('/'))];
      const paths = rest.filter((a) => a.startsWith('/'));
      if (first.startsWith('/')) usage('diff: name a point first (a tool_use id, a commit, HEAD~N or an ISO time), then the path');
      if (refs.length > 2) usage(`diff: at most two points, got ${refs.length}`);
      if (paths.length > 1) usage('diff: at most one path');
      const path = paths.length ? memoryPath(paths[0]) : MEMORY_ROOT;
      const store = await openStore(options.repo, { create: false });
      try {
        const from = await resolveAt(store, refs[0]);
        const to = await resolveAt(store, refs[1] ?? 'HEAD~0');
        const comparison = await compareMemory(store, from, to, path);
        if (options.json) {
          const files = comparison.files.map((f) => ({ status: f.status, oldPath: f.oldPath, newPath: f.newPath, added: f.added, removed: f.removed, patch: f.patch }));
          process.stdout.write(JSON.stringify({ from: from.commit, to: to.commit, path, files }) + '\n');
        } else if (options.stat || options.nameStatus) {
          const letter = { added: 'A', deleted: 'D', modified: 'M', renamed: 'R' } as const;
          for (const f of comparison.files) {
            const name = f.status === 'renamed' ? `${f.oldPath} -> ${f.newPath}` : (f.newPath ?? f.oldPath)!;
            process.stdout.write(options.nameStatus ? `${letter[f.status]}\t${name}\n` : ` ${name} | +${f.added} -${f.removed}\n`);
          }
        } else {
          process.stdout.write(comparison.files.map((f) => f.patch).join(''));
        }
      } finally {
        await store.close();
      }
    });
}
